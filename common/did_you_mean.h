#pragma once
// The "did you mean" hint of an error that names an unknown word (an option, a command, a JSON
// field, a checkpoint format): its own file so that every parser can offer it without options.

#include <string>
#include <vector>

namespace tv {

// " (did you mean X?)" for the known name nearest `word` (edit distance, at most a third of its
// length and never more than 3), "" when none is that near. For options, `prefix` is "--".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known,
                         const std::string& prefix = "");

}  // namespace tv
