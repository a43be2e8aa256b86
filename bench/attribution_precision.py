"""How often codeqa's attribution and support check are right, on hand-labelled sentences of real answers.

    .venv/bin/python bench/attribution_precision.py bench/questions/attribution-labels.jsonl [more.jsonl ...]
    .venv/bin/python bench/attribution_precision.py --template /tmp/real_answers/*.json > to-label.jsonl

A label file holds one answer a line (the format, bench/questions/attribution-labels.jsonl, shows it):

    {"id": "conan-7", "question": "...", "answer": "the model's text",
     "snippets": [{"path": "...", "start_line": 1, "end_line": 9, "text": "..."}],   # numbered from 1, as the model saw them
     "labels": [{"sentence": "the start of one sentence", "supported_by": [2], "note": "why"}]}

Labels of third-party answers (real answers on SWE-QA projects quote those projects' code) hold no answer or
snippets: `"source": "streamlink_nogrammar.jsonl", "line": 0` names the answer file (found in `--answers DIR`)
and its line, whose `answer` and `snippets` are read from there.

`supported_by` lists the snippets whose lines state the sentence's claim ([] when none does); a sentence with
`"claim": false` makes no claim to check and is left out. `--template` turns `codeqa ask --json` outputs (or
the lead's real-answer files: answer, snippets, question or query) into such lines with every sentence listed
and `supported_by` null, to be filled in by hand; null labels are skipped.

Reported, over the labelled sentences:
- attribution (support.attribute_sentence, run on every labelled sentence as if it were uncited): precision
  (the snippet it picks states the claim) and recall (it picks one that does, where one does);
- the support check (support.check_support, on each snippet a sentence cites): precision and recall of
  "supported", and precision of "not supported" (the lines really do not state it).
`grounded` counts attributions only when the measured precision reaches support.ATTRIBUTION_PRECISION_FLOOR.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from codeqa.answer.citations import _NUMBERED  # noqa: E402
from codeqa.answer.support import (ATTRIBUTION_PRECISION_FLOOR, attribute_sentence, check_support,  # noqa: E402
                                   cited_sentences, model_text, names, sentences)
from codeqa.types import Citation, Snippet  # noqa: E402


def _norm(text: str) -> str:
    return " ".join(text.split())


def _snippets(record: dict) -> list[Snippet]:
    return [Snippet(s["path"], int(s["start_line"]), int(s["end_line"]), s.get("text", "")) for s in record["snippets"]]


def template(paths: list[str]) -> None:
    """One label line per answer file, every sentence listed with `supported_by` null."""
    for path in paths:
        raw = Path(path).read_text()
        try:
            data = json.loads(raw)
        except json.JSONDecodeError:  # JSON lines
            data = [json.loads(line) for line in raw.splitlines() if line.strip()]
        for i, item in enumerate(data if isinstance(data, list) else [data]):
            text = model_text(item["answer"])
            print(json.dumps({"id": f"{Path(path).stem}-{i}", "question": item.get("question") or item.get("query", ""),
                              "answer": text, "snippets": item["snippets"],
                              "labels": [{"sentence": _norm(s.text)[:80], "supported_by": None, "note": ""}
                                         for s in sentences(text)]}))


def _label_of(sentence: str, labels: list[dict]) -> dict | None:
    text = _norm(sentence)
    return next((lab for lab in labels if text.startswith(_norm(lab["sentence"]))), None)


def _resolved(record: dict, answers: Path | None) -> dict:
    if "answer" in record:
        return record
    if answers is None:
        raise SystemExit(f"{record['id']}: its answer is in {record['source']}: give --answers DIR")
    lines = [line for line in (answers / record["source"]).read_text().splitlines() if line.strip()]
    source = json.loads(lines[record["line"]])
    return {**record, "answer": source["answer"], "snippets": source["snippets"]}


def measure(paths: list[str], answers: Path | None = None) -> dict:
    counts = dict(sentences=0, attributed=0, attributed_right=0, attributable=0, attributable_found=0,
                  pairs=0, said_supported=0, said_supported_right=0, truly_supported=0, said_unsupported=0,
                  said_unsupported_right=0, not_checked=0)
    misses: list[str] = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if not line.strip():
                continue
            record = _resolved(json.loads(line), answers)
            snippets = _snippets(record)
            known = sorted({s.path for s in snippets})
            seen: set[str] = set()  # a paragraph the model wrote twice is labelled once
            for sentence, spans in cited_sentences(model_text(record["answer"]), snippets, known):
                if _norm(sentence.text) in seen:
                    continue
                seen.add(_norm(sentence.text))
                label = _label_of(sentence.text, record["labels"])
                if label is None or label.get("supported_by") is None or label.get("claim") is False:
                    continue
                truth = set(label["supported_by"])
                counts["sentences"] += 1
                picked = attribute_sentence(sentence.text, snippets)
                number = snippets.index(picked) + 1 if picked is not None else None
                counts["attributable"] += bool(truth)
                if number is not None:
                    counts["attributed"] += 1
                    counts["attributed_right"] += number in truth
                    counts["attributable_found"] += number in truth
                    if number not in truth:
                        misses.append(f"attributed to [{number}], labelled {sorted(truth)}: {_norm(sentence.text)[:100]}")
                numbers = sorted({i for i, s in enumerate(snippets, 1) for span in spans if not span.rote
                                  and (s.path, s.start_line, s.end_line) == (span.path, span.start_line, span.end_line)})
                # the sentence with the numbers it rests on (its own, or a run on the line after its paragraph)
                alone = _NUMBERED.sub("", sentence.text).rstrip(" .") + " " + "".join(f"[{n}]" for n in numbers) + "."
                cited = [Citation(s.path, s.start_line, s.end_line, True) for s in snippets]
                checked = check_support(alone, cited, snippets, known,
                                        lambda p, a, b: next(s.text for s in snippets if (s.path, s.start_line,
                                                                                          s.end_line) == (p, a, b)))
                for n in numbers:
                    if not names(sentence.text):
                        counts["not_checked"] += 1
                        continue
                    verdict = checked[n - 1].supported
                    counts["pairs"] += 1
                    counts["truly_supported"] += n in truth
                    if verdict:
                        counts["said_supported"] += 1
                        counts["said_supported_right"] += n in truth
                    elif verdict is False:
                        counts["said_unsupported"] += 1
                        counts["said_unsupported_right"] += n not in truth
                    if bool(verdict) != (n in truth):
                        misses.append(f"[{n}] said {'supported' if verdict else 'not supported'}, labelled "
                                      f"{'supported' if n in truth else 'not'}: {_norm(sentence.text)[:100]}")
    ratio = lambda a, b: round(counts[a] / counts[b], 3) if counts[b] else None  # noqa: E731
    return {"counts": counts,
            "attribution_precision": ratio("attributed_right", "attributed"),
            "attribution_recall": ratio("attributable_found", "attributable"),
            "support_precision": ratio("said_supported_right", "said_supported"),
            "support_recall": ratio("said_supported_right", "truly_supported"),
            "unsupported_precision": ratio("said_unsupported_right", "said_unsupported"),
            "attribution_floor": ATTRIBUTION_PRECISION_FLOOR,
            "misses": misses}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--template", action="store_true", help="print label lines to fill in, from answer files")
    parser.add_argument("--answers", type=Path, help="the folder of the answer files that labels name as `source`")
    args = parser.parse_args()
    if args.template:
        template(args.files)
        return 0
    print(json.dumps(measure(args.files, args.answers), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
