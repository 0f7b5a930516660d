#include "launcher/job/free_port.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace tv {

int kernel_free_port(const std::string& bind_addr) {
  namespace asio = boost::asio;
  asio::io_context io;
  boost::system::error_code ec;
  const auto addr = asio::ip::make_address(bind_addr, ec);
  if (ec) return 0;
  asio::ip::tcp::acceptor probe(io);
  const asio::ip::tcp::endpoint ep(addr, 0);
  probe.open(ep.protocol(), ec);
  if (!ec) probe.bind(ep, ec);
  if (ec) return 0;
  return probe.local_endpoint().port();  // released when `probe` closes
}

}  // namespace tv
