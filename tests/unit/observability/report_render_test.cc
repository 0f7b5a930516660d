#include "launcher/observability/report_render.h"

#include <gtest/gtest.h>

#include "common/escape.h"

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

TEST(ReportRender, SecondsHaveOneFormat) {
  EXPECT_EQ(report_seconds(2276.789), "2276.789 s");
  EXPECT_EQ(report_seconds(0.0004), "0.000 s");
}

}  // namespace
}  // namespace tv
