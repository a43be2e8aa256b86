"""The parse stage on small sources, one per language with queries: real tree-sitter, the real queries.

tests/test_languages.py checks whole sample projects against a golden map, after resolution. These
tests check what `parse_source` itself promises, before resolution: the symbols (kind, qualified name,
lines, parent, doc comment, the `path#Qualified.name@line` id), the references with their kind, line,
column, line text and enclosing symbol, left unresolved for graph resolution; and how a file with a
syntax error, an empty file, same-named symbols and a C++ header behind `.h` come out.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from codeqa.languages import LANGUAGES, queries_dir
from codeqa.indexing.parse import parse_source
from codeqa.types import ParsedFile, SourceFile, symbol_id


def parse(path: str, language: str, text: str) -> ParsedFile:
    file = SourceFile(path, Path("/nonexistent") / path, language, len(text.encode()), hashlib.sha256(text.encode()).hexdigest())
    return parse_source(file, text)[0]


# One small file per language: a type with a doc comment and members, a function, calls, imports.
SAMPLES = {
    "python": ("shapes.py", '''import math


class Shape:
    """A shape."""

    def area(self):
        return 0


class Circle(Shape):
    def __init__(self, r: float):
        self.r = r

    def area(self):
        return math.pi * square(self.r)


def square(x):
    total = x * x
    return total


def build() -> Circle:
    return Circle(2)
'''),
    "javascript": ("shapes.js", '''import { square } from "./math.js";

/** A shape. */
class Shape {
  area() { return 0; }
}

class Circle extends Shape {
  constructor(r) { super(); this.r = r; }
  area() { return Math.PI * square(this.r); }
}

function build() {
  const c = new Circle(2);
  return c.area();
}
'''),
    "typescript": ("shapes.ts", '''import { square } from "./math";

/** A shape. */
interface Shape {
  area(): number;
}

class Circle implements Shape {
  constructor(private r: number) {}
  area(): number { return Math.PI * square(this.r); }
}

function build(): Shape {
  return new Circle(2);
}
'''),
    "tsx": ("App.tsx", '''import { Button } from "./Button";

/** The app. */
export function App() {
  return <Button label="go" />;
}
'''),
    "java": ("Shapes.java", '''package geo;

/** A shape. */
public class Circle extends Shape {
    private double r;

    public double area() {
        return Math.PI * square(r);
    }

    static double square(double x) { return x * x; }

    static Circle build() { return new Circle(); }
}
'''),
    "go": ("shapes.go", '''package geo

// Circle is a round shape.
type Circle struct {
	R float64
}

// Area of the circle.
func (c *Circle) Area() float64 {
	return 3.14 * square(c.R)
}

func square(x float64) float64 { return x * x }

func Build() *Circle { return &Circle{R: 2} }
'''),
    "rust": ("shapes.rs", '''/// A circle.
pub struct Circle {
    r: f64,
}

impl Circle {
    /// Its area.
    pub fn area(&self) -> f64 {
        3.14 * square(self.r)
    }
}

fn square(x: f64) -> f64 { x * x }

fn build() -> Circle { Circle { r: 2.0 } }
'''),
    "c": ("shapes.c", '''#include "shapes.h"

/* A circle. */
struct circle {
    double r;
};

static double square(double x) { return x * x; }

double area(struct circle *c) {
    return 3.14 * square(c->r);
}
'''),
    "cpp": ("shapes.cpp", '''#include "shapes.h"

// A circle.
class Circle : public Shape {
 public:
  double area() const { return 3.14 * square(r_); }
 private:
  double r_;
};

double square(double x) { return x * x; }

Circle* build() { return new Circle(); }
'''),
    "csharp": ("Shapes.cs", '''namespace Geo {
    /// <summary>A circle.</summary>
    public class Circle : Shape {
        private double r;

        public double Area() { return 3.14 * Square(r); }

        static double Square(double x) { return x * x; }

        static Circle Build() { return new Circle(); }
    }
}
'''),
    "ruby": ("shapes.rb", '''# A circle.
class Circle < Shape
  def initialize(r)
    @r = r
  end

  def area
    3.14 * square(@r)
  end
end

def square(x)
  x * x
end

def build
  Circle.new(2)
end
'''),
    "php": ("shapes.php", '''<?php
namespace Geo;

/** A circle. */
class Circle extends Shape {
    private $r;

    public function area() { return 3.14 * square($this->r); }
}

function square($x) { return $x * $x; }

function build() { return new Circle(2); }
'''),
    "lua": ("shapes.lua", '''local Shape = require("shape")

-- A circle.
local Circle = {}
setmetatable(Circle, { __index = Shape })

local function square(x)
  return x * x
end

function Circle:area()
  return 3.14 * square(self.r)
end

function build()
  return setmetatable({ r = 2 }, Circle)
end
'''),
    "bash": ("shapes.sh", '''#!/bin/sh
. ./lib.sh

# Squares a number.
square() {
  echo $(( $1 * $1 ))
}

function area {
  square "$1"
}
trap area EXIT
'''),
    "kotlin": ("shapes.kt", '''package geo

import geo.util.square

/** A circle. */
class Circle(val r: Double) : Shape() {
    fun area(): Double = 3.14 * square(r)
}

fun build(): Circle = Circle(2.0)
'''),
    "scala": ("shapes.scala", '''package geo

import geo.util.square

/** A circle. */
class Circle(r: Double) extends Shape {
  def area: Double = 3.14 * square(r)
}

def build(): Circle = new Circle(2.0)
'''),
    "swift": ("shapes.swift", '''import Geometry

/// A circle.
final class Circle: Shape {
    let r: Double
    func area() -> Double { 3.14 * square(r) }
}

func build() -> Circle { Circle(r: 2.0) }
'''),
    "dart": ("shapes.dart", '''import 'util.dart';

/// A circle.
class Circle extends Shape {
  final double r;
  double area() => 3.14 * square(r);
}

Circle build() => Circle(2.0);
'''),
    "solidity": ("Shapes.sol", '''pragma solidity ^0.8.0;
import "./Shape.sol";

/// A circle.
contract Circle is Shape {
    function area() public view returns (uint256) {
        return square(r);
    }
}

function build() returns (Circle) { return new Circle(); }
'''),
    "julia": ("shapes.jl", '''include("shape.jl")

"""A circle."""
struct Circle <: Shape
    r::Float64
end

area(c::Circle) = 3.14 * square(c.r)

function build()::Circle
    Circle(2.0)
end
'''),
    "r": ("shapes.R", '''source("shape.R")

#' A circle.
Circle <- setRefClass("Circle", contains = "Shape", methods = list(
  area = function() 3.14 * square(r)
))

build <- function() {
  Circle$new(r = 2)
}
'''),
    "elixir": ("shapes.ex", '''defmodule Circle do
  @moduledoc "A circle."
  import Geo.Util
  defstruct r: 1.0

  def area(%Circle{r: r}), do: 3.14 * square(r)

  def build, do: %Circle{r: 2.0} |> Shape.describe()
end
'''),
    "objc": ("shapes.m", '''#import "shape.h"

static double square(double x) { return x * x; }

/// A circle.
@interface Circle : Shape
- (double)area;
@end

@implementation Circle
- (double)area { return 3.14 * square(2.0); }
@end
'''),
    "haskell": ("Shapes.hs", '''module Shapes where

import Geo.Util (square)

-- | A circle.
data Circle = Circle Double

area :: Circle -> Double
area (Circle r) = 3.14 * square r

build = area (Circle 2.0)
'''),
    "groovy": ("shapes.groovy", '''package geo

import static geo.Util.square

/** A circle. */
class Circle extends Shape {
    double area() { 3.14 * square(2.0) }
}

Circle build() { new Circle() }
'''),
}


# What each sample must give: every symbol as (kind, qualified name, start, end) in order, the doc
# comments, and references that must be among those found as (name, kind, line, enclosing symbol).
SYMBOLS = {
    "python": [("class", "Shape", 4, 8), ("method", "Shape.area", 7, 8), ("class", "Circle", 11, 16),
               ("method", "Circle.__init__", 12, 13), ("method", "Circle.area", 15, 16),
               ("function", "square", 19, 21), ("function", "build", 24, 25)],
    "javascript": [("class", "Shape", 4, 6), ("method", "Shape.area", 5, 5), ("class", "Circle", 8, 11),
                   ("method", "Circle.constructor", 9, 9), ("method", "Circle.area", 10, 10), ("function", "build", 13, 16)],
    "typescript": [("interface", "Shape", 4, 6), ("method", "Shape.area", 5, 5), ("class", "Circle", 8, 11),
                   ("method", "Circle.constructor", 9, 9), ("method", "Circle.area", 10, 10), ("function", "build", 13, 15)],
    "tsx": [("function", "App", 4, 6)],
    "java": [("class", "Circle", 4, 14), ("method", "Circle.area", 7, 9), ("method", "Circle.square", 11, 11),
             ("method", "Circle.build", 13, 13)],
    "go": [("struct", "Circle", 4, 6), ("method", "Circle.Area", 9, 11), ("function", "square", 13, 13),
           ("function", "Build", 15, 15)],
    "rust": [("struct", "Circle", 2, 4), ("method", "Circle.area", 8, 10), ("function", "square", 13, 13),
             ("function", "build", 15, 15)],
    "c": [("struct", "circle", 4, 6), ("function", "square", 8, 8), ("function", "area", 10, 12)],
    "cpp": [("class", "Circle", 4, 9), ("method", "Circle.area", 6, 6), ("function", "square", 11, 11),
            ("function", "build", 13, 13)],
    "csharp": [("class", "Circle", 3, 11), ("method", "Circle.Area", 6, 6), ("method", "Circle.Square", 8, 8),
               ("method", "Circle.Build", 10, 10)],
    "ruby": [("class", "Circle", 2, 10), ("method", "Circle.initialize", 3, 5), ("method", "Circle.area", 7, 9),
             ("function", "square", 12, 14), ("function", "build", 16, 18)],
    "php": [("class", "Circle", 5, 9), ("method", "Circle.area", 8, 8), ("function", "square", 11, 11),
            ("function", "build", 13, 13)],
    "lua": [("module", "Circle", 4, 4), ("function", "square", 7, 9), ("method", "Circle.area", 11, 13),
            ("function", "build", 15, 17)],
    "bash": [("function", "square", 5, 7), ("function", "area", 9, 11)],
    "kotlin": [("class", "Circle", 6, 8), ("method", "Circle.area", 7, 7), ("function", "build", 10, 10)],
    "scala": [("class", "Circle", 6, 8), ("method", "Circle.area", 7, 7), ("function", "build", 10, 10)],
    "swift": [("class", "Circle", 4, 7), ("method", "Circle.area", 6, 6), ("function", "build", 9, 9)],
    "dart": [("class", "Circle", 4, 7), ("method", "Circle.area", 6, 6), ("function", "build", 9, 9)],
    "solidity": [("class", "Circle", 5, 9), ("method", "Circle.area", 6, 8), ("function", "build", 11, 11)],
    "julia": [("struct", "Circle", 4, 6), ("function", "area", 8, 8), ("function", "build", 10, 12)],
    "r": [("class", "Circle", 4, 6), ("method", "Circle.area", 5, 5), ("function", "build", 8, 10)],
    "elixir": [("module", "Circle", 1, 9), ("function", "Circle.area", 6, 6), ("function", "Circle.build", 8, 8)],
    "objc": [("function", "square", 3, 3), ("class", "Circle", 6, 8), ("method", "Circle.area", 11, 11)],
    "haskell": [("module", "Shapes", 1, 1), ("class", "Circle", 6, 6), ("function", "area", 8, 9), ("function", "build", 11, 11)],
    "groovy": [("class", "Circle", 6, 8), ("method", "Circle.area", 7, 7), ("function", "build", 10, 10)],
}
DOCS = {
    "python": {"Shape": "A shape."}, "javascript": {"Shape": "A shape."}, "typescript": {"Shape": "A shape."},
    "tsx": {"App": "The app."}, "java": {"Circle": "A shape."},
    "go": {"Circle": "Circle is a round shape.", "Circle.Area": "Area of the circle."},
    "rust": {"Circle": "A circle.", "Circle.area": "Its area."}, "c": {"circle": "A circle."}, "cpp": {"Circle": "A circle."},
    "csharp": {"Circle": "A circle."}, "ruby": {"Circle": "A circle."}, "php": {"Circle": "A circle."},
    "lua": {"Circle": "A circle."}, "bash": {"square": "Squares a number."},
    "kotlin": {"Circle": "A circle."}, "scala": {"Circle": "A circle."}, "swift": {"Circle": "A circle."},
    "dart": {"Circle": "A circle."},
    "solidity": {"Circle": "A circle."}, "julia": {"Circle": "A circle."}, "r": {"Circle": "A circle."},
    "elixir": {"Circle": "A circle."},
    "objc": {"Circle": "A circle."},
    "haskell": {"Circle": "A circle."},
    "groovy": {"Circle": "A circle."},
}
REFERENCES = {
    "python": [("math", "import", 1, None), ("Shape", "inheritance", 11, "Circle"), ("float", "type", 12, "Circle.__init__"),
               ("square", "call", 16, "Circle.area"), ("Circle", "type", 24, "build"), ("Circle", "call", 25, "build")],
    "javascript": [("square", "import", 1, None), ("Shape", "inheritance", 8, "Circle"), ("square", "call", 10, "Circle.area"),
                   ("Circle", "instantiation", 14, "build"), ("area", "call", 15, "build")],
    "typescript": [("square", "import", 1, None), ("Shape", "inheritance", 8, "Circle"), ("square", "call", 10, "Circle.area"),
                   ("Shape", "type", 13, "build"), ("Circle", "instantiation", 14, "build")],
    "tsx": [("Button", "import", 1, None), ("Button", "call", 5, "App")],
    "java": [("Shape", "inheritance", 4, "Circle"), ("square", "call", 8, "Circle.area"), ("Circle", "type", 13, "Circle.build"),
             ("Circle", "instantiation", 13, "Circle.build")],
    "go": [("Circle", "type", 9, "Circle.Area"), ("square", "call", 10, "Circle.Area"), ("Circle", "instantiation", 15, "Build")],
    "rust": [("square", "call", 9, "Circle.area"), ("Circle", "type", 15, "build"), ("Circle", "instantiation", 15, "build")],
    "c": [("shapes.h", "import", 1, None), ("circle", "type", 10, "area"), ("square", "call", 11, "area")],
    "cpp": [("shapes.h", "import", 1, None), ("Shape", "inheritance", 4, "Circle"), ("square", "call", 6, "Circle.area")],
    "csharp": [("Shape", "inheritance", 3, "Circle"), ("Square", "call", 6, "Circle.Area"), ("Circle", "instantiation", 10, "Circle.Build")],
    "ruby": [("Shape", "inheritance", 2, "Circle"), ("square", "call", 8, "Circle.area"), ("Circle", "instantiation", 17, "build")],
    "php": [("Shape", "inheritance", 5, "Circle"), ("square", "call", 8, "Circle.area"), ("Circle", "instantiation", 13, "build")],
    "lua": [("shape", "import", 1, None), ("Shape", "inheritance", 5, None), ("square", "call", 12, "Circle.area"),
            ("Circle", "attribute", 16, "build")],
    "bash": [("./lib.sh", "import", 2, None), ("square", "call", 10, "area"), ("area", "attribute", 12, None)],
    "kotlin": [("square", "import", 3, None), ("Shape", "inheritance", 6, "Circle"), ("square", "call", 7, "Circle.area"),
               ("Circle", "type", 10, "build"), ("Circle", "call", 10, "build")],
    "scala": [("square", "import", 3, None), ("Shape", "inheritance", 6, "Circle"), ("square", "call", 7, "Circle.area"),
              ("Circle", "type", 10, "build"), ("Circle", "instantiation", 10, "build")],
    "swift": [("Geometry", "import", 1, None), ("Shape", "inheritance", 4, "Circle"), ("square", "call", 6, "Circle.area"),
              ("Circle", "type", 9, "build"), ("Circle", "call", 9, "build")],
    "dart": [("util.dart", "import", 1, None), ("Shape", "inheritance", 4, "Circle"), ("square", "call", 6, "Circle.area"),
             ("Circle", "type", 9, "build"), ("Circle", "call", 9, "build")],
    "solidity": [("./Shape.sol", "import", 2, None), ("Shape", "inheritance", 5, "Circle"), ("square", "call", 7, "Circle.area"),
                 ("Circle", "type", 11, "build"), ("Circle", "instantiation", 11, "build")],
    "julia": [("shape.jl", "import", 1, None), ("Shape", "inheritance", 4, "Circle"), ("Circle", "type", 8, "area"),
              ("square", "call", 8, "area"), ("Circle", "type", 10, "build"), ("Circle", "call", 11, "build")],
    "r": [("shape.R", "import", 1, None), ("Shape", "inheritance", 4, "Circle"), ("square", "call", 5, "Circle.area"),
          ("Circle", "attribute", 9, "build")],
    "elixir": [("Geo.Util", "import", 3, "Circle"), ("Circle", "instantiation", 6, "Circle.area"),
               ("square", "call", 6, "Circle.area"), ("Circle", "instantiation", 8, "Circle.build"),
               ("describe", "call", 8, "Circle.build")],
    "objc": [("shape.h", "import", 1, None), ("Shape", "inheritance", 6, "Circle"), ("square", "call", 11, "Circle.area")],
    "haskell": [("square", "import", 3, None), ("Circle", "type", 8, "area"), ("Circle", "call", 9, "area"),
                ("square", "call", 9, "area"), ("area", "call", 11, "build"), ("Circle", "call", 11, "build")],
    "groovy": [("square", "import", 3, None), ("Shape", "inheritance", 6, "Circle"), ("square", "call", 7, "Circle.area"),
               ("Circle", "type", 10, "build"), ("Circle", "instantiation", 10, "build")],
}


def sample(language: str) -> ParsedFile:
    path, text = SAMPLES[language]
    return parse(path, language, text)


def test_every_language_with_queries_has_a_sample():
    # a markup row's scripts run another language's queries (its own folder holds none): tested in test_languages
    with_queries = {lang.name for lang in LANGUAGES
                    if (queries_dir() / lang.name / "definitions.scm").is_file() and not lang.script_regions}
    assert with_queries == set(SAMPLES) == set(SYMBOLS) == set(REFERENCES)


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_symbols_with_kinds_lines_ids_and_doc_comments(language):
    parsed = sample(language)
    path = SAMPLES[language][0]
    assert parsed.error is None
    assert [(s.kind, s.qualified_name, s.start_line, s.end_line) for s in parsed.symbols] == SYMBOLS[language]
    for s in parsed.symbols:
        assert s.id == symbol_id(path, s.qualified_name, s.start_line) == f"{path}#{s.qualified_name}@{s.start_line}"
        assert s.path == path and s.language == language and s.name == s.qualified_name.rsplit(".", 1)[-1]
        assert s.signature and "\n" not in s.signature
    docs = {s.qualified_name: s.docstring for s in parsed.symbols if s.docstring}
    assert docs == DOCS[language]


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_a_member_belongs_to_the_symbol_that_holds_it(language):
    symbols = {s.qualified_name: s for s in sample(language).symbols}
    for s in symbols.values():
        owner = symbols.get(s.qualified_name.rpartition(".")[0])
        assert s.parent_id == (owner.id if owner else None), s.qualified_name
        if owner and language not in ("go", "rust", "lua", "objc"):  # methods outside the type (receivers, impl blocks, `function T:m()`, @implementation)
            assert owner.start_line <= s.start_line <= s.end_line <= owner.end_line


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_references_with_kind_line_and_enclosing_symbol(language):
    parsed = sample(language)
    by_id = {s.id: s.qualified_name for s in parsed.symbols}
    found = {(r.name, r.kind, r.line, by_id.get(r.enclosing_symbol_id)) for r in parsed.references}
    missing = set(REFERENCES[language]) - found
    assert not missing, f"missing {missing}; found {sorted(found, key=lambda f: f[2])}"


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_each_reference_points_at_its_name_and_is_left_for_resolution(language):
    parsed = sample(language)
    lines = SAMPLES[language][1].splitlines()
    for r in parsed.references:
        line = lines[r.line - 1]
        assert line[r.column:r.column + len(r.name)] == r.name, r  # 0-based column of the name itself
        assert r.line_text == line.strip() and r.path == SAMPLES[language][0]
        assert r.target_ids == () and r.confidence in ("unresolved", "local"), r  # graph resolution decides
        holders = [s for s in parsed.symbols if s.start_line <= r.line <= s.end_line]
        innermost = min(holders, key=lambda s: (s.end_line - s.start_line, -s.start_line), default=None)
        assert r.enclosing_symbol_id == (innermost.id if innermost else None), r


def test_a_syntax_error_keeps_what_parsed_and_names_the_line():
    parsed = parse("b.py", "python", "def ok():\n    return 1\n\n\ndef broken(:\n    pass\n\n\ndef after():\n    return ok()\n")
    assert parsed.error == "syntax errors near line 5; parsed what was readable"
    assert [s.qualified_name for s in parsed.symbols] == ["ok", "broken", "after"]
    assert [(r.name, r.kind, r.line) for r in parsed.references] == [("ok", "call", 10)]


def test_an_empty_file_and_a_file_without_a_grammar_give_nothing():
    empty = parse("e.py", "python", "")
    assert (empty.symbols, empty.references, empty.error) == ((), (), None)
    text = "def looks_like_python():\n    pass\n"
    file = SourceFile("notes.txt", Path("/nonexistent/notes.txt"), None, len(text), "0" * 64)
    parsed, tree = parse_source(file, text)
    assert (parsed.symbols, parsed.references, tree) == ((), (), None)


def test_same_named_definitions_get_their_own_ids_and_nesting_qualifies_names():
    parsed = parse("d.py", "python", "import sys\n\nif sys.platform == 'win32':\n    def path():\n        return 'a'\n"
                                     "else:\n    def path():\n        return 'b'\n\n\n"
                                     "def outer():\n    def inner():\n        return 1\n    return inner()\n")
    ids = [s.id for s in parsed.symbols]
    assert ids == ["d.py#path@4", "d.py#path@7", "d.py#outer@11", "d.py#outer.inner@12"]
    inner = parsed.symbols[3]
    assert inner.parent_id == "d.py#outer@11"
    call = [r for r in parsed.references if r.name == "inner"]
    assert [(r.kind, r.line, r.enclosing_symbol_id) for r in call] == [("call", 14, "d.py#outer@11")]


def test_a_local_variable_read_is_only_type_evidence():
    parsed = sample("python")
    total = [r for r in parsed.references if r.name == "total"]
    assert total and all(r.confidence == "local" for r in total)  # `total = x * x; return total`


def test_a_cpp_header_named_dot_h_is_parsed_as_cpp():
    parsed = parse("box.h", "c", "template <typename T>\nclass Box {\n public:\n  T get() const { return value_; }\n"
                                  " private:\n  T value_;\n};\n")
    assert [(s.kind, s.qualified_name, s.language) for s in parsed.symbols] == [("class", "Box", "cpp"), ("method", "Box.get", "cpp")]
    assert parsed.error is None
    plain_c = parse("vec.h", "c", "struct vec { int x; };\n\nstruct vec *vec_new(void);\n\nint vec_len(struct vec *v) { return 0; }\n")
    assert {s.language for s in plain_c.symbols} == {"c"}


def test_a_dot_h_file_showing_cpp_syntax_is_parsed_as_cpp_first_and_as_c_only_when_that_fails(monkeypatch):
    """The C grammar took ~4x as long as the C++ one on C++ headers, recovering from errors: a .h with a
    namespace, template, class body or access specifier goes to the C++ grammar first. C code that only
    looks like it (a variable named `template`) still ends as C."""
    import codeqa.indexing.parse as parse_module

    grammars: list[str] = []
    real = parse_module.get_parser

    def counting(language: str):
        grammars.append(language)
        return real(language)

    monkeypatch.setattr(parse_module, "get_parser", counting)
    header = parse("ns.h", "c", "#pragma once\nnamespace ui {\nclass Widget {\n public:\n  int width() const;\n};\n}\n")
    assert grammars == ["cpp"] and header.error is None
    assert {s.language for s in header.symbols} == {"cpp"}
    grammars.clear()
    lookalike = parse("below.h", "c", "static int below(int template, int limit) {\n  return\n  template < limit;\n}\n")
    assert grammars == ["cpp", "c"] and lookalike.error is None
    assert [(s.qualified_name, s.language) for s in lookalike.symbols] == [("below", "c")]
    grammars.clear()
    plain = parse("vec.h", "c", "struct vec { int x; };\nint vec_len(struct vec *v);\n")
    assert grammars == ["c"] and plain.error is None  # no C++ syntax, clean as C: one parse


def test_a_cpp_function_returning_a_pointer_is_a_symbol():
    parsed = parse("make.cpp", "cpp", "class Circle {};\n\nCircle* build() { return new Circle(); }\n")
    assert [s.qualified_name for s in parsed.symbols] == ["Circle", "build"]


def test_patterns_run_apart_as_captures_find_what_they_find_as_matches(monkeypatch):
    """One-capture patterns (names, scopes, bindings) run as plain captures (QuerySet.names), not as
    matches of the combined query: every fixture file, in every language, parses to the same symbols
    and references as with every pattern in the combined query."""
    from codeqa import languages
    from codeqa.indexing import parse
    from codeqa.indexing.walk import walk_repository
    from codeqa.source_text import read_source_text

    fixtures = Path(__file__).parent / "fixtures"
    files = [f for root in ("languages", "repo", "pyrefs") for f in walk_repository(fixtures / root).files if f.language]

    def parse_all():
        languages.get_query_set.cache_clear()
        parse._reference_patterns.cache_clear()
        return [parse.parse_source(f, read_source_text(f.abs_path))[0] for f in files]

    apart = parse_all()
    moved = {lang: languages.get_query_set(lang).names for lang in ("python", "java", "go", "rust", "typescript")}
    assert all(moved.values())  # each of these languages has patterns run apart
    monkeypatch.setattr(languages, "_captured_apart", lambda pattern: False)
    together = parse_all()
    assert languages.get_query_set("python").names is None
    monkeypatch.undo()
    languages.get_query_set.cache_clear()
    parse._reference_patterns.cache_clear()
    assert len({f.language for f in files}) >= 10 and sum(len(pf.references) for pf in apart) > 300
    assert apart == together
