// Words for a POSIX shell: a line that `eval set -- LINE` (or a script) reads back as the same
// words. Used by `render --target slurm` (the sbatch script) and `checkpoint latest --resume-arg`.
#pragma once

#include <string>
#include <string_view>

namespace tv {

// `word` as it is when every character is safe ([A-Za-z0-9_./:=@%+,-], and not empty), else
// single-quoted with each ' written '\''.
std::string shell_word(std::string_view word);

}  // namespace tv
