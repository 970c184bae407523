"""Exit classification of attempts: the pure classifier and its versioned pattern table."""

from durabench.classify.classifier import classify, parse_transcript, served_model_matches
from durabench.classify.metered import model_mismatch
from durabench.classify.table import PATTERNS_FILE, PatternTable, load_table

__all__ = [
    "PATTERNS_FILE",
    "PatternTable",
    "classify",
    "load_table",
    "model_mismatch",
    "parse_transcript",
    "served_model_matches",
]
