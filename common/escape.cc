#include "common/escape.h"

#include <cstdio>

namespace tv {
namespace {

bool is_control(unsigned char c) { return c < 0x20 || c == 0x7f; }

void append_escaped(std::string& out, unsigned char c) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default: {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
}

std::string escape(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (!is_control(c) || (keep_lines && (c == '\n' || c == '\t')))
      out += ch;
    else
      append_escaped(out, c);
  }
  return out;
}

}  // namespace

std::string escape_control(std::string_view text) { return escape(text, false); }

std::string escape_control_keep_lines(std::string_view text) { return escape(text, true); }

std::string escape_html(std::string_view text) {
  std::string out;
  for (char ch : escape_control(text)) switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  return out;
}

bool has_control(std::string_view text) {
  for (char ch : text)
    if (is_control(static_cast<unsigned char>(ch))) return true;
  return false;
}

}  // namespace tv
