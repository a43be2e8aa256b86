"""The resolve stage: references -> the definitions they name, across files.

    index.py    lookup tables over every symbol, and the files a module string names
    values.py   what a name or an expression stands for (`Value`), and the memo of answers
    members.py  classes, members, receivers and type evidence (`x` in `x.m()`)
    resolve.py  names, imports and re-exports, and the answer for each reference
    modules.py  a file as a module symbol (Python, ...): what an import or a name of a module refers to
    incremental.py  which files a change makes to resolve again, and what is kept between runs
"""

from .index import GraphIndex
from .resolve import resolve_references

__all__ = ["GraphIndex", "resolve_references"]
