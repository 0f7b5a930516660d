// Boost.URL's compiled part (Boost 1.81 ships it as source for one translation unit; Debian has no
// libboost_url): the OTLP endpoint's parser and the headers' percent-decoding (otlp_config.cc).
#include <boost/url/src.hpp>
