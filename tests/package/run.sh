#!/usr/bin/env bash
# The package test: installs a built tree into a temporary prefix and builds and runs the consumer
# project (tests/package/consumer) against it with find_package, then one program through
# pkg-config (wow.pc), then the tutorial as its page writes it (docs/TUTORIAL.md, through
# tests/docs/extract_snippets.py --project), then the same consumer with the checkout added as a
# subdirectory.
#
#   bash tests/package/run.sh BUILD_DIR
#
# BUILD_DIR is a configured and built tree of this checkout (scripts/build.sh). The SQLite program
# is built when the tree installed the sqlite component. WOW_PACKAGE_SUBDIRECTORY=0 skips the
# add_subdirectory build (it compiles the libraries once more); JOBS (default 2) is the build's
# parallelism; KEEP=1 keeps the temporary directory.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build_dir=$(cd "${1:?usage: run.sh BUILD_DIR}" && pwd)
jobs=${JOBS:-2}
build_type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
build_type=${build_type:-Release}

work=$(mktemp -d "${TMPDIR:-/tmp}/wow-package.XXXXXX")
if [[ ${KEEP:-0} == 1 ]]; then
  echo "package test: keeping $work"
else
  trap 'rm -rf "$work"' EXIT
fi
prefix=$work/prefix

echo "-- package test: cmake --install $build_dir --prefix $prefix"
cmake --install "$build_dir" --prefix "$prefix" >"$work/install.log"
config=$(find "$prefix" -name wowConfig.cmake -print -quit)
[[ -n $config ]] || { echo "no wowConfig.cmake installed"; exit 1; }
for header in aggregate.h command_processor.h event_log.h; do
  [[ -f $prefix/include/wow/$header ]] || { echo "include/wow/$header not installed"; exit 1; }
done
# The installed package must not point back into the checkout or the build tree.
if grep -rlF -e "$root" -e "$build_dir" "$(dirname "$config")" "$prefix"/lib*/pkgconfig; then
  echo "the installed package files above name the source or build directory"
  exit 1
fi

with_sqlite=ON
[[ -f $(dirname "$config")/wow-sqlite-targets.cmake ]] || with_sqlite=OFF

echo "-- package test: the consumer with find_package(wow) (sqlite: $with_sqlite)"
cmake -S "$root/tests/package/consumer" -B "$work/consumer" -DCMAKE_BUILD_TYPE="$build_type" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCONSUMER_WITH_SQLITE=$with_sqlite >"$work/consumer.log"
cmake --build "$work/consumer" -j "$jobs" >>"$work/consumer.log" ||
  { cat "$work/consumer.log"; exit 1; }
ctest --test-dir "$work/consumer" --output-on-failure

echo "-- package test: a program through pkg-config (wow.pc)"
export PKG_CONFIG_PATH=$(dirname "$(find "$prefix" -name wow.pc -print -quit)")
consumer=$root/tests/package/consumer
# The libraries are static: --static adds their private dependencies.
# shellcheck disable=SC2046
c++ -std=c++20 -Wall -Wextra -Werror $(pkg-config --cflags wow) \
  "$consumer/memory_main.cc" "$consumer/brand.cc" -o "$work/pkg_config_memory" \
  $(pkg-config --libs --static wow)
"$work/pkg_config_memory"

if [[ $with_sqlite == ON ]]; then
  echo "-- package test: the tutorial (docs/TUTORIAL.md) written out and built as its page says"
  tutorial=$work/tutorial
  mkdir -p "$tutorial/home"
  ln -s "$prefix" "$tutorial/home/wow"  # the page installs into $HOME/wow
  python3 "$root/tests/docs/extract_snippets.py" --project "$root/docs/TUTORIAL.md" \
    "$tutorial/accounts" "$tutorial/commands.sh"
  (cd "$tutorial" && HOME=$tutorial/home CMAKE_BUILD_PARALLEL_LEVEL=$jobs bash commands.sh) \
    >"$tutorial/commands.log" 2>&1 || { cat "$tutorial/commands.log"; exit 1; }
  grep -q "^accepted" "$tutorial/commands.log" ||
    { cat "$tutorial/commands.log"; echo "the tutorial's demo did not print accepted"; exit 1; }
  # Its page says a second run is refused: the e-mail is held by the first run's account.
  second=$(cd "$tutorial/accounts/build" && ./accounts_demo) && status=0 || status=$?
  [[ $status == 1 && $second == "rejected EMAIL_TAKEN" ]] ||
    { echo "the tutorial's demo run again said \"$second\" (exit $status), not rejected EMAIL_TAKEN"; exit 1; }
  echo "the tutorial: built, its specs passed, its demo accepted then rejected EMAIL_TAKEN"
fi

if [[ ${WOW_PACKAGE_SUBDIRECTORY:-1} != 0 ]]; then
  echo "-- package test: the consumer with add_subdirectory($root)"
  cmake -S "$consumer" -B "$work/subdirectory" -DCMAKE_BUILD_TYPE="$build_type" \
    -DWOW_SOURCE_DIR="$root" -DWOW_WITH_SQLITE=$with_sqlite -DCONSUMER_WITH_SQLITE=$with_sqlite \
    >"$work/subdirectory.log"
  cmake --build "$work/subdirectory" -j "$jobs" >>"$work/subdirectory.log" ||
    { cat "$work/subdirectory.log"; exit 1; }
  ctest --test-dir "$work/subdirectory" --output-on-failure
fi
echo "-- package test: passed"
