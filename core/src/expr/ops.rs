//! Operator overloading for [`Expr`]: `&x * 2.0 + y`, with owned or borrowed operands and
//! Rust literals on either side.

use std::ops;

use super::{BinaryOp, Expr, UnaryOp};

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

macro_rules! literal_into_expr {
    ($($t:ty => $ctor:ident as $wide:ty),*) => {
        $(
            impl From<$t> for Expr {
                fn from(v: $t) -> Expr {
                    Expr::$ctor(v as $wide)
                }
            }
        )*
    };
}

literal_into_expr!(f32 => float as f64, f64 => float as f64, i32 => int as i64, u32 => int as i64, i64 => int as i64);

macro_rules! binary_operator {
    ($trait:ident, $method:ident, $op:ident) => {
        impl<R: Into<Expr>> ops::$trait<R> for Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                self.into_binary(BinaryOp::$op, rhs)
            }
        }
        impl<R: Into<Expr>> ops::$trait<R> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                self.binary(BinaryOp::$op, rhs)
            }
        }
        binary_operator!(@literal $trait, $method, $op, f32, f64, i32, u32, i64);
    };
    (@literal $trait:ident, $method:ident, $op:ident, $($t:ty),*) => {
        $(
            impl ops::$trait<Expr> for $t {
                type Output = Expr;
                fn $method(self, rhs: Expr) -> Expr {
                    Expr::from(self).into_binary(BinaryOp::$op, rhs)
                }
            }
            impl ops::$trait<&Expr> for $t {
                type Output = Expr;
                fn $method(self, rhs: &Expr) -> Expr {
                    Expr::from(self).into_binary(BinaryOp::$op, rhs)
                }
            }
        )*
    };
}

binary_operator!(Add, add, Add);
binary_operator!(Sub, sub, Sub);
binary_operator!(Mul, mul, Mul);
binary_operator!(Div, div, Div);
binary_operator!(Rem, rem, Rem);
binary_operator!(BitAnd, bitand, And);
binary_operator!(BitOr, bitor, Or);
binary_operator!(BitXor, bitxor, Xor);

impl ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        Expr::new(super::Node::Unary(UnaryOp::Neg, self))
    }
}

impl ops::Neg for &Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        self.unary(UnaryOp::Neg)
    }
}
