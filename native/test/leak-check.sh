#!/usr/bin/env bash
# Runs the addon's entry points under valgrind: any definitely lost block or memory error
# fails. V8's own conservative stack scan is suppressed (native/test/valgrind.supp).
set -euo pipefail
cd "$(dirname "$0")"
exec valgrind --quiet --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --error-exitcode=1 --suppressions=valgrind.supp \
  node --expose-gc leak-check.mjs
