#!/usr/bin/env bash
# Checks that a trainvisor binary runs in any image with glibc >= 2.35 (Ubuntu 22.04, the Isaac
# Sim / Isaac Lab and Cosmos images): reads its dynamic section and symbol versions with readelf.
#   scripts/check-portable.sh [BINARY=build-portable/trainvisor]
# Fails (exit 1), naming each offender, when the binary
#   - needs a shared library other than glibc's, libstdc++ and libgcc_s,
#   - needs a symbol version newer than GLIBC_2.35, GLIBCXX_3.4.30, CXXABI_1.3.13 or GCC_12.0.0
#     (override with MAX_GLIBC, MAX_GLIBCXX, MAX_CXXABI, MAX_GCC),
#   - has an RPATH/RUNPATH, or is not stripped.
# Prints the size, the libraries and the newest version of each kind.
set -euo pipefail
bin="${1:-build-portable/trainvisor}"
[[ -f "$bin" ]] || { echo "check-portable: $bin: no such file" >&2; exit 2; }
declare -A max=([GLIBC]="${MAX_GLIBC:-2.35}" [GLIBCXX]="${MAX_GLIBCXX:-3.4.30}"
                [CXXABI]="${MAX_CXXABI:-1.3.13}" [GCC]="${MAX_GCC:-12.0.0}")
allowed='^(libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|librt\.so\.1|ld-linux-x86-64\.so\.2|ld-linux-aarch64\.so\.1|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$'
failures=()

dynamic="$(readelf -d "$bin")"
mapfile -t needed < <(sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' <<<"$dynamic")
for lib in "${needed[@]}"; do
  [[ "$lib" =~ $allowed ]] || failures+=("needs $lib (only glibc, libstdc++ and libgcc_s may be dynamic)")
done
grep -qE '\((RPATH|RUNPATH)\)' <<<"$dynamic" && failures+=("has an RPATH/RUNPATH")
readelf -S "$bin" | grep -q ' \.symtab ' && failures+=("is not stripped (.symtab present)")

# Versions the binary requires (the .gnu.version_r section), e.g. GLIBC_2.34, GLIBCXX_3.4.30.
mapfile -t versions < <(readelf -V "$bin" | sed -n 's/.*Name: \([A-Z]*_[0-9.]*\).*/\1/p' | sort -u)
declare -A newest=()
for v in "${versions[@]}"; do
  kind="${v%%_*}" num="${v#*_}"
  [[ -n "${max[$kind]:-}" ]] || continue
  if [[ "$(printf '%s\n%s\n' "$num" "${max[$kind]}" | sort -V | tail -1)" != "${max[$kind]}" ]]; then
    failures+=("needs $v (at most ${kind}_${max[$kind]})")
  fi
  if [[ -z "${newest[$kind]:-}" ||
        "$(printf '%s\n%s\n' "$num" "${newest[$kind]}" | sort -V | tail -1)" == "$num" ]]; then
    newest[$kind]="$num"
  fi
done

echo "binary:  $bin ($(stat -c %s "$bin") bytes)"
echo "needs:   ${needed[*]}"
for kind in GLIBC GLIBCXX CXXABI GCC; do
  echo "newest:  ${kind}_${newest[$kind]:-none} (limit ${kind}_${max[$kind]})"
done
if ((${#failures[@]})); then
  printf 'NOT PORTABLE: %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "portable: runs with glibc >= ${max[GLIBC]}"
