#!/bin/bash
# Reward 1.0 when every test passes, else 0.0.
mkdir -p /logs/verifier
if python3 /tests/test_broadcast.py > /logs/verifier/test-output.txt 2>&1; then
  echo 1.0 > /logs/verifier/reward.txt
else
  echo 0.0 > /logs/verifier/reward.txt
fi
cat /logs/verifier/test-output.txt
