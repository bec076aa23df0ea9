#!/usr/bin/env bash
# The crates as a user gets them: package every published crate, publish them into a local
# registry, install the CLI from it and build a user's project against it.
#
#   1. `cargo package --workspace`: every crate packaged and verified together (each .crate
#      unpacked and built on its own, its dependencies on our other crates taken from the
#      other .crate files, the rest from crates.io).
#   2. A registry of those .crate files (target/local-registry/: a git index on the file
#      system, whose crates.io dependencies point at crates.io), named
#      `polycompute-local` in a cargo config beside it.
#   3. `cargo install --registry polycompute-local polycompute-cli`: the `polycompute`
#      command, from the packages alone.
#   4. A copy of examples/downstream whose dependency is `polycompute = "0.1"` (the lines
#      docs/testing.md gives), resolved from that registry (a `[patch.crates-io]` in the
#      config), built with the README's two lines: `eval "$(polycompute cuda-stub)"`, then
#      `cargo build --features cuda`.
#
# Once the crates are on crates.io, steps 3 and 4 are the README's commands as written, with no
# registry named. Idempotent. Needs what scripts/test.sh sets up (Rust, a C compiler, python3,
# the CUDA link stub's environment for the verification build of polycompute-cuda) and the
# network of crates.io (the verification resolves against it). Reuses the workspace's target
# folder: the dependencies are the workspace's (its Cargo.lock), so only our crates build again.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
target="${CARGO_TARGET_DIR:-$root/target}"
export CARGO_TARGET_DIR="$target"
name=polycompute-local

run() {
    echo "+ $*"
    "$@"
}

# 1. Package and verify. A clean clone needs no --allow-dirty; a checkout with uncommitted
#    changes to packaged files is refused, as publishing would refuse it.
run cargo package --workspace --locked

# 2. The registry: .crate files and one index line per crate, from `cargo metadata` of the
#    workspace (the same manifests that were packaged). Its folder is named by the commit's
#    tree (step 1 refused uncommitted changes): cargo never rebuilds a registry crate whose
#    version it has built, nor unpacks it again, so new sources need a new registry URL, and
#    the same sources find the last run's builds. Older registries are removed.
reg="$target/local-registry/$(git rev-parse --short=12 'HEAD^{tree}')"
find "$target/local-registry" -mindepth 1 -maxdepth 1 ! -path "$reg" -exec rm -rf {} + 2>/dev/null || true
rm -rf "$reg"
mkdir -p "$reg/crates" "$reg/index" "$reg/work/.cargo"
cp "$target"/package/*.crate "$reg/crates/"
echo "+ index $reg/index from cargo metadata"
cargo metadata --format-version 1 --no-deps --locked | python3 -c '
import hashlib, json, os, sys
meta, reg = json.load(sys.stdin), sys.argv[1]
crates_io = "https://github.com/rust-lang/crates.io-index"
own = "file://" + os.path.join(reg, "index")
def index_path(name):
    n = name.lower()
    if len(n) <= 2:
        return f"{len(n)}/{n}"
    if len(n) == 3:
        return f"3/{n[0]}/{n}"
    return f"{n[:2]}/{n[2:4]}/{n}"
published = []
for pkg in meta["packages"]:
    if pkg.get("publish") == []:
        continue
    crate = os.path.join(reg, "crates", pkg["name"] + "-" + pkg["version"] + ".crate")
    with open(crate, "rb") as f:
        cksum = hashlib.sha256(f.read()).hexdigest()
    deps = []
    for d in pkg["dependencies"]:
        # Dev-dependencies play no part in resolving a dependency (and path-only ones are
        # stripped by `cargo package`).
        if d["kind"] == "dev":
            continue
        deps.append({
            "name": d["rename"] or d["name"],
            "package": d["name"] if d["rename"] else None,
            "req": d["req"],
            "features": d["features"],
            "optional": d["optional"],
            "default_features": d["uses_default_features"],
            "target": d["target"],
            "kind": d["kind"] or "normal",
            # Our own crates (path dependencies with a version) are in this registry, named
            # by its URL; the others on crates.io. (The builds read the dependencies of the
            # packaged manifests, which name crates.io for ours: hence the patch below.)
            "registry": own if d.get("path") else (d.get("registry") or crates_io),
        })
    line = {"name": pkg["name"], "vers": pkg["version"], "deps": deps, "cksum": cksum,
            "features": pkg["features"], "yanked": False, "links": pkg.get("links"),
            "rust_version": pkg.get("rust_version"), "v": 2}
    path = os.path.join(reg, "index", index_path(pkg["name"]))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(json.dumps(line) + "\n")
    published.append(pkg["name"])
with open(os.path.join(reg, "index", "config.json"), "w") as f:
    json.dump({"dl": f"file://{reg}/crates/{{crate}}-{{version}}.crate"}, f)
with open(os.path.join(reg, "published"), "w") as f:
    f.write("\n".join(published) + "\n")
print(f"  {len(published)} crates in the index")
' "$reg"
# A git index: cargo reads a file:// index only through git (its sparse protocol wants an HTTP
# status, which a file:// URL has not); the .crate files themselves download from file://.
git -C "$reg/index" init --quiet
git -C "$reg/index" add .
git -C "$reg/index" -c user.name=package.sh -c user.email=package.sh@localhost commit --quiet -m index

# The config that names the registry, read by every cargo command run under $reg/work (the
# workspace's own .cargo/config.toml, further up, still applies: same profiles, so the
# dependencies' builds are shared). A packaged manifest names its dependencies on our other
# crates as crates.io's, as they will be; the patch takes each of them, and the downstream
# project's `polycompute = "0.1"`, from here instead (the downstream build warns that it
# uses neither of the CLI's own two).
{
    printf '[registries.%s]\nindex = "file://%s/index"\n\n[patch.crates-io]\n' "$name" "$reg"
    while read -r crate; do
        printf '%s = { version = "0.1", registry = "%s" }\n' "$crate" "$name"
    done <"$reg/published"
} >"$reg/work/.cargo/config.toml"
cd "$reg/work"

# 3. The CLI from the registry. --debug: the dev profile the workspace's builds (and the
#    verification above) used, so the dependencies are not built again in release. An install
#    from a registry reads only $CARGO_HOME's config, so both configs are named (the
#    workspace's for its profile settings, again so that the builds are shared). Not --locked:
#    the Cargo.lock inside the .crate names crates.io as our crates' source, which it will be
#    once they are published, and cannot be here; so the dependencies resolve afresh, as for a
#    user's plain `cargo install polycompute-cli`.
tools="$reg/tools"
run cargo install --debug --quiet --registry "$name" polycompute-cli --root "$tools" \
    --config "$root/.cargo/config.toml" --config "$reg/work/.cargo/config.toml"

# 4. The downstream example against the registry: its two polycompute lines become the
#    registry's `polycompute = "0.1"`; its Cargo.lock keeps the dependencies' versions.
run cp -r "$root/examples/downstream" downstream
run rm -rf downstream/target downstream/tests/snapshots/*.snap.new
sed -i -e 's|^polycompute = { path = "\.\./\.\." }$|polycompute = "0.1"|' \
    -e 's|^polycompute = { path = "\.\./\.\.", features = \["testing"\] }$|polycompute = { version = "0.1", features = ["testing"] }|' \
    downstream/Cargo.toml
if grep -n 'path *=' downstream/Cargo.toml; then
    echo "scripts/package.sh: examples/downstream/Cargo.toml has a polycompute line this script does not know" >&2
    exit 1
fi
echo "+ grep polycompute downstream/Cargo.toml"
grep '^polycompute' downstream/Cargo.toml
cd downstream
# The README's two lines, in a clean environment: the installed command on PATH, no CUDA
# variables of our own (CARGO_TARGET_DIR stays: the stub goes to its cuda-stub/ folder).
clean=(env -u CUDA_LIBRARY_PATH -u CUDA_PATH -u CUDA_ROOT -u CUDA_TOOLKIT_ROOT_DIR -u LD_LIBRARY_PATH
    -u POLYCOMPUTE_REQUIRE "PATH=$tools/bin:$PATH")
echo "+ ${clean[*]} bash -c 'eval \"\$(polycompute cuda-stub)\" && cargo build --features cuda'"
"${clean[@]}" bash -euo pipefail -c '
    eval "$(polycompute cuda-stub)"
    cargo build --features cuda
'
# The build used the registry's crates, not this checkout's.
echo "+ cargo tree --features cuda -e normal -i polycompute --depth 0"
from="$(cargo tree --features cuda -e normal -i polycompute --depth 0)"
echo "$from"
[[ "$from" == *"(registry \`$name\`)"* ]] ||
    { echo "scripts/package.sh: polycompute did not come from the local registry" >&2; exit 1; }
echo "scripts/package.sh: every crate packaged, the CLI installed from the local registry, the downstream example built from it with --features cuda"
