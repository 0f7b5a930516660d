// Text from outside (a worker's error message, a host name from the environment, a value a peer
// sent) is escaped before it lands in a log line, the failure file or the termination message, so
// it can neither forge a line nor drive a terminal.
#pragma once

#include <string>
#include <string_view>

namespace tv {

// Every control character (below 0x20, and 0x7f) written as an escape: "\n", "\r", "\t", "\x1b".
// Bytes of 0x80 and above (UTF-8) are kept as they are.
std::string escape_control(std::string_view text);

// The same, but '\n' and '\t' are kept (a traceback keeps its lines); "\r", ESC and the others are
// escaped.
std::string escape_control_keep_lines(std::string_view text);

// Text for an HTML page (`trainvisor report --html`), as element content or a quoted attribute
// value: control characters escaped as escape_control does, then & < > " ' as character
// references, so nothing from outside can open a tag, end an attribute or forge a line.
std::string escape_html(std::string_view text);

// True when `text` holds a control character (below 0x20, or 0x7f).
bool has_control(std::string_view text);

}  // namespace tv
