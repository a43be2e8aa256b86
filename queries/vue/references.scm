; A .vue file is markup: its <script> blocks are parsed as TypeScript or JavaScript, by their lang
; attribute, with those queries (languages.py script_regions, codeqa/embedded.py). Nothing runs from here.
