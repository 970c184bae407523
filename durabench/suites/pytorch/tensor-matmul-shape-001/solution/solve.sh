#!/bin/bash
# Reference fix: the inner dimensions are a's columns and b's rows.
set -euo pipefail
sed -i 's/    if m != k:/    if k2 != k:/' /workspace/tinytensor/linalg.py
grep -q 'if k2 != k:' /workspace/tinytensor/linalg.py
