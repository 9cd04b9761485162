"""The ``runtime`` profile: questions put to the evaluator, answers merged into rows."""
