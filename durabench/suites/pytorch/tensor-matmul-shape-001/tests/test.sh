#!/bin/bash
# Reward: 1.0 if valid products work and misaligned ones raise ValueError, else 0.0.
mkdir -p /logs/verifier
python3 /tests/test_linalg.py > /logs/verifier/test-output.txt 2>&1
status=$?
cat /logs/verifier/test-output.txt
[ "$status" -eq 0 ] && echo 1.0 > /logs/verifier/reward.txt || echo 0.0 > /logs/verifier/reward.txt
