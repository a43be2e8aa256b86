"""Evaluation: how well codeqa retrieves and answers on a question set with known answers.

    questions.py   the JSON-lines question format, and generators (docstring, usage, relationship)
    metrics.py     the hit rule, recall@k / MRR@10, per-question results, aggregates, results files
    judge.py       an LLM grades an answer's faithfulness and correctness
    evaluate.py    run_evaluation(): search + answer + judge every question
    report.py      the markdown report with its plot, and the comparison of two runs

The shell is `codeqa eval` (codeqa/cli/evaluate.py); nothing here prints.
"""
