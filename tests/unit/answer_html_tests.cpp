// Issue 19, points 6 and 7: a build's colour from its label, {name} placeholders in titles, and the rule that
// keeps the article's figures from runs of other sizes.
#include <catch2/catch.hpp>

#include <regex>

#include "config/loader.hpp"
#include "config/placeholders.hpp"
#include "helpers.hpp"
#include "report/colors.hpp"
#include "report/comparable.hpp"
#include "report/html.hpp"
#include "report/markdown.hpp"
#include "report/text.hpp"
#include "report_test_util.hpp"
#include "results/results_file.hpp"

using namespace gilhost;
using Catch::Matchers::Contains;
using json = nlohmann::json;

namespace {

struct Hsl {
  int h, s, l;
};
Hsl hsl_of(const std::string& colour) {
  std::smatch m;
  REQUIRE(std::regex_match(colour, m, std::regex(R"(hsl\((\d+),(\d+)%,(\d+)%\))")));
  return {std::stoi(m[1]), std::stoi(m[2]), std::stoi(m[3])};
}
int hue_distance(int a, int b) { return std::min(std::abs(a - b), 360 - std::abs(a - b)); }

}  // namespace

TEST_CASE("build colour: a build and its t / t+gil twins share a hue, in three shades", "[report][html][answer-html]") {
  const Hsl gil = hsl_of(build_color("3.14.7")), ft = hsl_of(build_color("3.14.7t")), forced = hsl_of(build_color("3.14.7t+gil"));
  CHECK(gil.h == ft.h);
  CHECK(gil.h == forced.h);
  CHECK(gil.l != ft.l);
  CHECK(gil.l != forced.l);
  CHECK(ft.l != forced.l);
  CHECK(hue_distance(gil.h, 212) <= 12);  // 3.14 is a blue
  // Other minor versions: far apart; two patch levels of one minor: near, not equal.
  CHECK(hue_distance(hsl_of(build_color("3.12.1")).h, gil.h) > 60);
  CHECK(hue_distance(hsl_of(build_color("3.13.0")).h, hsl_of(build_color("3.12.1")).h) > 20);
  CHECK(build_color("3.12.1") != build_color("3.12.3"));
  CHECK(hue_distance(hsl_of(build_color("3.12.1")).h, hsl_of(build_color("3.12.3")).h) <= 24);
  // A pure function: the same label, the same colour; labels that name no version still get one.
  CHECK(build_color("3.13.0t") == build_color("3.13.0t"));
  CHECK_NOTHROW(hsl_of(build_color("pypy")));
  CHECK_NOTHROW(hsl_of(build_color("")));
}

TEST_CASE("placeholders: {name} is the param's value, grouped in thousands; unknown names listed", "[config][answer-html]") {
  const json params = {{"n", 200000}, {"mode", "threads"}, {"big", -3000000}, {"x", 0.5}};
  CHECK(fill_placeholders("{n} iterations", params, true).text == "200,000 iterations");
  CHECK(fill_placeholders("{n} iterations", params, false).text == "200000 iterations");
  CHECK(fill_placeholders("{mode}: {big} / {x}", params, true).text == "threads: -3,000,000 / 0.5");
  CHECK(fill_placeholders("{{n}} {n}", params, true).text == "{n} 200,000");
  CHECK(param_value_text(json(999)) == "999");
  CHECK(param_value_text(json(1000)) == "1,000");
  const FilledText f = fill_placeholders("{n} of {size} and {m}", params, true);
  CHECK(f.unknown == std::vector<std::string>{"size", "m"});
  CHECK(f.text == "200,000 of {size} and {m}");
}

TEST_CASE("placeholders: description and view titles filled from the params used; an unknown name is located",
          "[config][loader][answer-html]") {
  gilhost_test::TempDir dir;
  const std::string path = (dir / "exp.toml").string();
  gilhost_test::write_file(dir / "s.py", "def run(**kw):\n    return kw\n");
  const std::string text =
      "[experiment]\nscript = \"s.py\"\ndescription = \"add {n} times\"\n[params]\nn = 3_000_000\n"
      "[profile.quick]\nparams = { n = 200_000 }\n[[case]]\nname = \"one\"\ncall = \"run\"\n[[case]]\nname = \"two\"\ncall = \"run\"\n"
      "[[view]]\ntitle = \"two / one at n = {n}\"\nkind = \"ratio\"\na = \"two\"\nb = \"one\"\n";
  CHECK(load_experiment_text(text, path, "").description == "add 3,000,000 times");
  const Experiment quick = load_experiment_text(text, path, "quick");
  CHECK(quick.description == "add 200,000 times");
  CHECK(quick.views.at(0).title == "two / one at n = 200,000");
  LoadOptions options;
  options.params = {{"n", 5000}};
  CHECK(load_experiment_text(text, path, options).views.at(0).title == "two / one at n = 5,000");
  CHECK(load_experiment_text(text, path, options).file_params == json{{"n", 3000000}});
  try {
    load_experiment_text(text + "[[view]]\ntitle = \"{size}\"\nkind = \"ratio\"\na = \"two\"\nb = \"one\"\n", path, "");
    FAIL("a title naming no param was accepted");
  } catch (const ConfigErrors& e) {
    REQUIRE(e.errors().size() == 1);
    CHECK_THAT(e.errors()[0].message, Contains("title uses {size} but no param has that name"));
    CHECK(e.errors()[0].where.line == 20);
  }
}

TEST_CASE("not comparable: params other than the file's own", "[report][answer-html]") {
  const json same = {{"file_params", {{"n", 3000000}}}, {"params", {{"n", 3000000}}}, {"param_overrides", json::object()}};
  CHECK(param_changes(same).empty());
  const json quick = {{"file_params", {{"n", 3000000}, {"jobs", 8}}}, {"params", {{"n", 200000}, {"jobs", 8}}}};
  const auto changes = param_changes(quick);
  REQUIRE(changes.size() == 1);
  CHECK(not_comparable_text(changes) == "article (n = 3,000,000; this run n = 200,000): not comparable");
  // A key only the profile sets: the file's value is unknown, the run's is said.
  CHECK(not_comparable_text(param_changes({{"file_params", json::object()}, {"params", {{"size", 10}}}})) ==
        "article (this run size = 10): not comparable");
  // A file written before file_params: --param alone tells.
  CHECK(param_changes({{"params", {{"n", 5}}}, {"param_overrides", json::object()}}).empty());
  CHECK(param_changes({{"params", {{"n", 5}}}, {"param_overrides", {{"n", 5}}}}).size() == 1);
}

TEST_CASE("not comparable: the views lose the article's figure in every format", "[report][answer-html]") {
  auto loaded = load_results_ordered(report_test::fixture("report_scaling.jsonl"));
  const auto render_all = [](const LoadedResults& in) {
    const ReportModel model = build_report_model(merge_results({in}), {});
    return std::vector<std::string>{render_text(model), render_markdown(model), render_html(model)};
  };
  for (const auto& out : render_all(loaded)) {
    CHECK_THAT(out, Contains("1.90x"));
    CHECK_THAT(out, !Contains("not comparable"));
  }
  CHECK_THAT(render_all(loaded)[2], Contains("<line class=\"article\""));
  for (auto& line : loaded.lines)
    if (auto* meta = std::get_if<MetaRecord>(&line)) {
      meta->experiment.document["file_params"] = {{"total", 4000000}};
      meta->experiment.document["params"] = {{"total", 2000000}};
    }
  for (const auto& out : render_all(loaded)) {
    CHECK_THAT(out, Contains("article (total = 4,000,000; this run total = 2,000,000): not comparable"));
    CHECK_THAT(out, !Contains("1.90x"));
  }
  CHECK_THAT(render_all(loaded)[2], !Contains("<line class=\"article\""));
}
