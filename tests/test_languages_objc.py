"""Objective-C over the sample in tests/fixtures/languages/objc/ (the golden map covers every line; these
tests name the facts the language is about)."""

from __future__ import annotations

from test_languages import one, project, refs, sample, symbols_by_qualified_name, targets


def test_headers_with_objective_c_syntax_are_objective_c_files():
    parsed, _ = sample("objc")
    assert {pf.file.path: pf.file.language for pf in parsed}["Shape.h"] == "objc"  # a .h is C's by extension
    symbols = symbols_by_qualified_name("objc")
    assert symbols["Shape"].kind == "class" and symbols["Shape"].docstring == "A shape with a name."
    assert symbols["Drawable"].kind == "interface" and symbols["Drawable.drawAt"].kind == "method"
    assert symbols["Shape.name"].kind == "method"  # a property: its getter
    # the @implementation's methods belong to the class its header declares
    area = [s for pf in parsed for s in pf.symbols if s.qualified_name == "Circle.area"][0]
    assert area.path == "Shape.m" and area.parent_id is None


def test_message_sends_on_classes_declared_variables_and_self():
    assert targets(one("objc", "main.m", 11, "shapeNamed")) == ["Shape.m:Shape.shapeNamed"]  # [Shape shapeNamed:]
    sends = {tuple(targets(r)) for r in refs("objc", "main.m", "area") if r.line == 12}  # Circle *circle; [circle area]
    assert sends == {("Shape.m:Circle.area",), ("Shape.m:Shape.area",)}
    via_self = one("objc", "Shape.m", 19, "area")  # [self area] inside @implementation Shape
    assert (via_self.confidence, targets(via_self)) == ("exact", ["Shape.m:Shape.area"])
    assert targets(one("objc", "Shape.m", 19, "name")) == ["Shape.h:Shape.name"]  # self.name
    created = one("objc", "main.m", 9, "Circle", kind="instantiation")  # [Circle new]
    assert targets(created) == ["Shape.h:Circle"]


def test_imports_are_transitive_and_reach_c_functions():
    c_call = one("objc", "Shape.m", 25, "square")  # Shape.h imports Geometry.h: square() is in Geometry.m
    assert targets(c_call) == ["Geometry.m:square"]
    assert targets(one("objc", "Shape.h", 16, "Shape")) == ["Shape.h:Shape"]  # @interface Circle : Shape


def test_only_the_first_selector_keyword_of_a_message_send_is_a_call(tmp_path):
    # `options:` of `[NSJSONSerialization dataWithJSONObject:o options:0 error:nil]` is part of one
    # selector, no call of the property Settings.options (AFNetworking: 22 such references, all wrong)
    (tmp_path / "Settings.h").write_text("@interface Settings : NSObject\n@property (nonatomic) int options;\n"
                                         "+ (id)dataWith:(id)o options:(int)n;\n@end\n")
    (tmp_path / "Settings.m").write_text("#import \"Settings.h\"\n\n@implementation Settings\n"
                                         "+ (id)dataWith:(id)o options:(int)n {\n    return o;\n}\n@end\n")
    (tmp_path / "main.m").write_text("#import \"Settings.h\"\n\nint main(void) {\n"
                                     "    id data = [NSJSONSerialization dataWithJSONObject:@1 options:0 error:nil];\n"
                                     "    return [Settings dataWith:data options:1] != nil;\n}\n")
    _, resolved = project(tmp_path)
    sends = [(r.line, r.name, targets(r)) for r in resolved if r.path == "main.m" and r.kind == "call"]
    assert sends == [(5, "dataWith", ["Settings.m:Settings.dataWith"])]


def test_apple_macros_the_grammar_misreads_are_blanked_in_headers_and_implementations(tmp_path):
    # a bare NS_ASSUME_NONNULL_BEGIN line made tree-sitter-objc lose a whole header (AFNetworking: 8 of
    # 26 headers gave no symbol) and availability macros wrecked implementations; lines stay exact
    header = tmp_path / "Widget.h"
    header.write_text(
        "#import <Foundation/Foundation.h>\n\nNS_ASSUME_NONNULL_BEGIN\n\n"  # 1-4
        "@protocol Refreshing <NSObject>\n"  # 5
        "- (void)refreshWithDelay:(double)delay API_AVAILABLE(ios(10), macosx(10.12));\n@end\n\n"  # 6-8
        "@interface Widget : NSObject <Refreshing>\n"  # 9
        "@property (nonatomic, copy, nullable) NSString *title NS_SWIFT_NAME(caption);\n"  # 10
        "- (instancetype)initWithTitle:(NSString *)title NS_DESIGNATED_INITIALIZER;\n@end\n\n"  # 11-13
        "NS_ASSUME_NONNULL_END\n")
    (tmp_path / "Widget.m").write_text(
        "#import \"Widget.h\"\n\n@implementation Widget\n"  # 1-3
        "- (void)refreshWithDelay:(double)delay AF_API_AVAILABLE(ios(10), macosx(10.12), watchos(3))\n{\n"  # 4-5
        "    if (delay > 0) LOG_DELAY(delay);\n}\n\n"  # 6-8
        "- (void)reset {\n    [self refreshWithDelay:0];\n}\n@end\n")  # 9-12
    parsed, resolved = project(tmp_path)
    by_path = {pf.file.path: pf for pf in parsed}
    assert by_path["Widget.h"].file.language == "objc" and by_path["Widget.h"].error is None  # C's .h, as Objective-C
    assert [(s.qualified_name, s.kind, s.start_line, s.end_line) for s in by_path["Widget.h"].symbols] == [
        ("Refreshing", "interface", 5, 7), ("Refreshing.refreshWithDelay", "method", 6, 6),
        ("Widget", "class", 9, 12), ("Widget.title", "method", 10, 10)]
    implementation = by_path["Widget.m"]
    assert implementation.error is None
    assert [(s.qualified_name, s.start_line, s.end_line) for s in implementation.symbols] == [
        ("Widget.refreshWithDelay", 4, 7), ("Widget.reset", 9, 11)]
    assert [r.line for r in implementation.references if r.name == "LOG_DELAY"] == [6]  # a statement's macro stays
    call = [r for r in resolved if r.path == "Widget.m" and r.name == "refreshWithDelay"]
    assert [(r.line, r.confidence) for r in call] == [(10, "exact")] and "Widget.m:Widget.refreshWithDelay" in targets(call[0])
