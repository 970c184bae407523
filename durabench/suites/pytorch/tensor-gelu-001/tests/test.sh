#!/bin/bash
# Reward: 1.0 if GELU matches the reference and relu still works, else 0.0.
mkdir -p /logs/verifier
python3 /tests/test_activations.py | tee /logs/verifier/test-output.txt
if [ "${PIPESTATUS[0]}" -eq 0 ]; then reward=1.0; else reward=0.0; fi
echo "$reward" > /logs/verifier/reward.txt
