// Integer comparisons (1 or 0, in the operands' type) and truthiness; the placeholder T
// in braces is i32 or u32.

fn eq_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), a == b); }
fn ne_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), a != b); }
fn lt_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), a < b); }
fn le_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), a <= b); }
fn gt_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), a > b); }
fn ge_{T}(a: {T}, b: {T}) -> {T} { return select({T}(0), {T}(1), a >= b); }
fn truthy_{T}(c: {T}) -> bool { return c != {T}(0); }
