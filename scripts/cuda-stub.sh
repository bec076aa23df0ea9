#!/usr/bin/env bash
# Generates a link stub of libcuda under target/cuda-stub/, so that `--features cuda` builds and
# its tests run on a machine without an NVIDIA driver or CUDA toolkit (CPU-only CI).
# It stays a script because CI evaluates it before anything is built; a project that depends on
# polycompute gets the same stub from the CLI: `eval "$(polycompute cuda-stub)"`
# (cli/src/cuda_stub.rs). Both take the C from cli/src/cuda_stub/{common,resolve}.c, so the two stubs cannot drift apart.
#
# The entry points are cust_raw's own list (cust's bindings). On x86-64 the stub is a static
# archive, lib64/libcuda.a, of forwarders: the first call of any entry point loads the system's
# libcuda.so.1 and every call jumps to the real function; without a driver each entry point
# returns CUDA_ERROR_STUB_LIBRARY (34); an entry point the real driver lacks returns
# CUDA_ERROR_NOT_FOUND (500, "named symbol not found") after one line on stderr naming it; and
# cuGetErrorString/cuGetErrorName succeed (with the stub's own strings), so formatting an error
# never fails. A binary linked against it therefore needs no libcuda to start, reports
# "libcuda.so.1 not found" where there is none, and uses the real driver where there is one:
# the stub can never shadow a driver.
#
# Elsewhere (aarch64, ...) it is a shared library, lib64/libcuda.so with soname libcuda.so.1,
# whose every entry point returns 34; binaries then need it on LD_LIBRARY_PATH to start on a
# machine without a driver, and `--env` adds it there only when the system has no libcuda.so.1.
#
#   scripts/cuda-stub.sh            builds the stub (idempotent), prints the folder for CUDA_LIBRARY_PATH
#   eval "$(scripts/cuda-stub.sh --env)"
#                                   also exports CUDA_LIBRARY_PATH (read by cust's build script),
#                                   and LD_LIBRARY_PATH where the shared stub is used
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/cuda-stub"
lib="$out/lib64"
# forward (x86-64) or shared (elsewhere); CUDA_STUB_KIND=shared forces the shared stub.
if [[ -n "${CUDA_STUB_KIND:-}" ]]; then
    kind="$CUDA_STUB_KIND"
elif [[ "$(uname -m)" == x86_64 ]]; then
    kind=forward
else
    kind=shared
fi

# cust_raw's bindings are the list of entry points: find its sources the way cargo resolved them.
find_cust_raw() {
    local manifest
    manifest="$(cd "$root" && cargo metadata --format-version 1 2>/dev/null |
        grep -o '"manifest_path":"[^"]*/cust_raw-[^"]*/Cargo.toml"' | head -n1 | cut -d'"' -f4 || true)"
    if [[ -z "$manifest" ]]; then
        (cd "$root" && cargo fetch >/dev/null 2>&1) || true
        manifest="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cust_raw-*/Cargo.toml 2>/dev/null | sort -V | tail -n1 || true)"
    fi
    [[ -n "$manifest" ]] || { echo "cuda-stub.sh: cannot find cust_raw's sources (run cargo fetch)" >&2; exit 1; }
    dirname "$manifest"
}

# The C part common to both kinds: error strings that work without a driver.
common_c() {
    sed '1s|`polycompute cuda-stub`|scripts/cuda-stub.sh|' "$root/cli/src/cuda_stub/common.c"
}

# x86-64 SysV: each entry point saves the argument registers, asks the resolver for the
# target, restores them and jumps, so arguments (stack ones included) and the result pass
# through untouched whatever the signature.
forwarder_c() {
    local names=("$@") i
    common_c
    echo '#include <dlfcn.h>'
    echo '#include <stdio.h>'
    echo '#define MISSING 500 /* CUDA_ERROR_NOT_FOUND: the real driver lacks this entry point */'
    echo 'static int pc_missing_entry(void) { return MISSING; }'
    echo "#define COUNT ${#names[@]}"
    echo 'static const char *const pc_names[COUNT] = {'
    for i in "${names[@]}"; do echo "  \"$i\","; done
    echo '};'
    cat "$root/cli/src/cuda_stub/resolve.c"
    echo '__asm__('
    echo '  ".text\n"'
    local idx=0
    for i in "${names[@]}"; do
        cat <<ASM
  ".globl $i\n.type $i,@function\n$i:\n"
  "  pushq %rdi\n  pushq %rsi\n  pushq %rdx\n  pushq %rcx\n  pushq %r8\n  pushq %r9\n"
  "  subq \$136, %rsp\n"
  "  movdqu %xmm0, 0(%rsp)\n  movdqu %xmm1, 16(%rsp)\n  movdqu %xmm2, 32(%rsp)\n  movdqu %xmm3, 48(%rsp)\n"
  "  movdqu %xmm4, 64(%rsp)\n  movdqu %xmm5, 80(%rsp)\n  movdqu %xmm6, 96(%rsp)\n  movdqu %xmm7, 112(%rsp)\n"
  "  movq \$$idx, %rdi\n  call pc_cuda_resolve\n"
  "  movdqu 0(%rsp), %xmm0\n  movdqu 16(%rsp), %xmm1\n  movdqu 32(%rsp), %xmm2\n  movdqu 48(%rsp), %xmm3\n"
  "  movdqu 64(%rsp), %xmm4\n  movdqu 80(%rsp), %xmm5\n  movdqu 96(%rsp), %xmm6\n  movdqu 112(%rsp), %xmm7\n"
  "  addq \$136, %rsp\n"
  "  popq %r9\n  popq %r8\n  popq %rcx\n  popq %rdx\n  popq %rsi\n  popq %rdi\n"
  "  jmp *%rax\n.size $i, .-$i\n"
ASM
        idx=$((idx + 1))
    done
    echo ');'
}

shared_c() {
    local i
    common_c
    echo 'int cuGetErrorName(int e, const char **s) { return pc_stub_error_name(e, s); }'
    echo 'int cuGetErrorString(int e, const char **s) { return pc_stub_error_string(e, s); }'
    for i in "$@"; do
        case "$i" in cuGetErrorName | cuGetErrorString) ;; *) echo "int $i(void) { return pc_stub_entry(); }" ;; esac
    done
}

build() {
    local src bindings c names product
    src="$(find_cust_raw)"
    bindings="$src/src/cuda.rs"
    [[ -f "$bindings" ]] || { echo "cuda-stub.sh: $bindings is missing" >&2; exit 1; }
    if [[ "$kind" == forward ]]; then product="$lib/libcuda.a"; else product="$lib/libcuda.so"; fi
    if [[ -f "$product" && "$product" -nt "$bindings" && "$product" -nt "${BASH_SOURCE[0]}" ]]; then
        return
    fi
    rm -rf "$lib"
    mkdir -p "$lib"
    mapfile -t names < <(grep -oE 'pub fn cu[A-Za-z0-9_]+' "$bindings" | awk '{print $3}' | sort -u)
    c="$out/stub.c"
    if [[ "$kind" == forward ]]; then
        forwarder_c "${names[@]}" >"$c.tmp"
        mv "$c.tmp" "$c"
        "${CC:-cc}" -c -fPIC -O1 -o "$out/stub.o" "$c"
        rm -f "$product.tmp"
        ar rcs "$product.tmp" "$out/stub.o"
    else
        shared_c "${names[@]}" >"$c.tmp"
        mv "$c.tmp" "$c"
        "${CC:-cc}" -shared -fPIC -O1 -Wl,-soname,libcuda.so.1 -o "$product.tmp" "$c"
        ln -sf libcuda.so "$lib/libcuda.so.1"
    fi
    mv "$product.tmp" "$product"
}

system_has_driver() {
    ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '
}

build
case "${1:-}" in
--env)
    echo "export CUDA_LIBRARY_PATH='$out'"
    if [[ "$kind" != forward ]] && ! system_has_driver; then
        echo "export LD_LIBRARY_PATH='$lib'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    fi
    ;;
"") echo "$out" ;;
*) echo "usage: $0 [--env]" >&2; exit 2 ;;
esac
