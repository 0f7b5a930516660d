#include "launcher/observability/report_render.h"

#include <gtest/gtest.h>

#include "common/escape.h"
#include "tests/unit/observability/ledger_records.h"

namespace tv {
namespace {

// A ledger whose every text came from outside and tries to break out of the page or the line.
Ledger hostile() {
  Ledger l;
  l.job_id = "job<script>alert(1)</script>";
  ContainerRecord c;
  c.started_unix = 100;
  c.heartbeat_unix = 200;
  c.productive = 100;
  c.ended = true;
  c.exit_code = 1;
  c.generations = {{.started_unix = 101,
                    .ended_unix = 150,
                    .outcome = "failed",
                    .summary = "exit 1: \"><img src=x onerror=alert(1)>\n\x1b[31mforged line",
                    .evidence = {"/logs/</code><script>x</script>/error.json"}}};
  c.failure_file = "/opt/ml/output/fail'ure";
  put_record(l, c);
  return l;
}

TEST(ReportRender, PageEscapesEverythingFromTheLedger) {
  const std::string page = report_html(job_report(hostile()));
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find('\x1b'), std::string::npos);
  EXPECT_NE(page.find("job&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(page.find("&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\\n\\x1b[31mforged line"),
            std::string::npos);
  EXPECT_NE(page.find("/logs/&lt;/code&gt;&lt;script&gt;x&lt;/script&gt;/error.json"),
            std::string::npos);
  EXPECT_NE(page.find("fail&#39;ure"), std::string::npos);
  // Nothing may be fetched or run: the policy allows inline style alone.
  EXPECT_NE(page.find("content=\"default-src 'none'; style-src 'unsafe-inline'\""),
            std::string::npos);
  EXPECT_EQ(page.find("http"), page.find("http-equiv"));  // no address but the meta's name
}

TEST(ReportRender, TextKeepsEachLedgerTextOnOneLine) {
  const std::string text = report_text(job_report(hostile()));
  EXPECT_EQ(text.find('\x1b'), std::string::npos);
  EXPECT_NE(text.find("\\n\\x1b[31mforged line)"), std::string::npos);
  EXPECT_EQ(text.find("\nforged"), std::string::npos);
}

TEST(ReportRender, PageAndTextShowTheSameFigures) {
  const JobReport r = job_report(hostile());
  const std::string page = report_html(r), text = report_text(r);
  const auto figures = report_figures(r);
  ASSERT_GT(figures.size(), 20u);
  for (const auto& f : figures) {
    if (f.id == "job") continue;  // escaped differently in each form (above)
    const std::string cell = "data-figure=\"" + f.id + "\" data-label=\"" + escape_html(f.label) +
                             "\">" + escape_html(f.value) + "<";
    EXPECT_NE(page.find(cell), std::string::npos) << cell;
    EXPECT_NE(text.find(f.label), std::string::npos) << f.id;
    EXPECT_NE(text.find(f.value + "\n"), std::string::npos) << f.id;
  }
}

// Why the job died, on the page and in the text: the lost node's ending (exit 75) red and in the
// failures with its reason, each container's exit code, a log's exception line beside its path,
// and wall-clock times (UTC, ISO 8601) on the axis.
Ledger lost_node() {
  Ledger l;
  l.job_id = "job";
  ContainerRecord c = testing::container(0, 1700000000, 1700000100, true);
  c.exit_code = 75;
  GenerationRecord failed = testing::generation(0, 1700000000, 1700000040, "failed");
  failed.summary = "rank 1 (node 0, local 1): exit 1";
  add_evidence(failed, "/logs/attempt_0/rank_1/stderr.log", "ValueError: <b>boom</b>");
  c.generations = {failed, testing::generation(1, 1700000041, 1700000100, "stopped")};
  put_record(l, c);
  return l;
}

TEST(ReportRender, PageSaysWhyTheJobDied) {
  const std::string page = report_html(job_report(lost_node()));
  EXPECT_EQ(page.find("class=\"stopped\""), std::string::npos);
  EXPECT_NE(page.find("generation 1: <strong>failed</strong> &#8212; exit 75: lost node"),
            std::string::npos)
      << page;
  EXPECT_NE(page.find("<text class=\"exit\" data-exit=\"0\" x=\"4\" y=\"25.0\">exit 75</text>"),
            std::string::npos);
  EXPECT_NE(page.find("(container exit 75)"), std::string::npos);
  EXPECT_NE(page.find("<code class=\"evidence\">/logs/attempt_0/rank_1/stderr.log</code> <span "
                      "class=\"exception\">ValueError: &lt;b&gt;boom&lt;/b&gt;</span>"),
            std::string::npos);
  EXPECT_NE(page.find(">2023-11-14T22:13:20Z<title>0.000 s from the first start</title>"),
            std::string::npos);
  EXPECT_NE(page.find(">2023-11-14T22:15:00Z<title>100.000 s"), std::string::npos);
}

TEST(ReportRender, TextSaysWhyTheJobDied) {
  const std::string text = report_text(job_report(lost_node()));
  EXPECT_NE(text.find("timeline (seconds from the job's first start, 2023-11-14T22:13:20Z)"),
            std::string::npos);
  EXPECT_NE(text.find("container 0 0.000 s to 100.000 s (2023-11-14T22:13:20Z to "
                      "2023-11-14T22:15:00Z): ended, exit 75: lost node (a peer node was lost or "
                      "the rendezvous timed out), 0 restart(s)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("generation 1 41.000 s to 100.000 s: failed (exit 75: lost node"),
            std::string::npos);
  EXPECT_NE(text.find("evidence /logs/attempt_0/rank_1/stderr.log: ValueError: <b>boom</b>\n"),
            std::string::npos);
}

// Ticks a fraction of a second apart still differ: the axis shows the digits they need.
TEST(ReportRender, ShortJobsAxisShowsFractionsOfASecond) {
  Ledger l = lost_node();
  l.records[0].heartbeat_unix = 1700000002;
  l.records[0].generations.clear();
  const std::string page = report_html(job_report(l));
  EXPECT_NE(page.find(">2023-11-14T22:13:20.4Z<"), std::string::npos) << page;
}

TEST(ReportRender, SecondsHaveOneFormat) {
  EXPECT_EQ(report_seconds(2276.789), "2276.789 s");
  EXPECT_EQ(report_seconds(0.0004), "0.000 s");
}

}  // namespace
}  // namespace tv
