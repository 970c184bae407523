#!/bin/bash
# Reward: the fraction of reduction checks that pass (1.0 when all do).
mkdir -p /logs/verifier
python3 /tests/test_reduce.py > /logs/verifier/test-output.txt 2>&1
cat /logs/verifier/test-output.txt
python3 -c '
import sys
lines = open("/logs/verifier/test-output.txt").read().split()
passed, failed = lines.count("PASS"), lines.count("FAIL")
print(passed / (passed + failed) if passed + failed else 0.0)
' > /logs/verifier/reward.txt
