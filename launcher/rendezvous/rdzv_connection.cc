#include "launcher/rendezvous/rdzv_connection.h"

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

namespace tv::rdzv {

namespace asio = boost::asio;
using asio::ip::tcp;

Connection::Connection(tcp::socket socket, std::string key, Direction incoming)
    : socket_(std::move(socket)),
      key_(std::move(key)),
      incoming_(incoming),
      outgoing_(incoming == Direction::kToAgent ? Direction::kToCoordinator : Direction::kToAgent) {
  boost::system::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  peer_ = ec ? std::string("?") : ep.address().to_string() + ":" + std::to_string(ep.port());
  socket_.set_option(tcp::no_delay(true), ec);
}

void Connection::start(OnMessage on_message, OnClose on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
  reading_ = true;
  read_header();
}

void Connection::rebind(OnMessage on_message, OnClose on_close) {
  on_message_ = std::move(on_message);
  on_close_ = std::move(on_close);
}

void Connection::read_header() {
  asio::async_read(socket_, asio::buffer(header_buf_),
                   [self = shared_from_this()](boost::system::error_code ec, size_t) {
                     if (self->closed_) return;
                     if (ec)
                       return self->fail(ec == asio::error::eof ? "closed by peer" : ec.message());
                     auto h = decode_header(self->header_buf_);
                     if (!h) return self->fail(h.error().message);
                     self->header_ = *h;
                     self->read_body();
                   });
}

void Connection::read_body() {
  body_buf_.resize(header_.payload_len + kMacSize);
  asio::async_read(socket_, asio::buffer(body_buf_),
                   [self = shared_from_this()](boost::system::error_code ec, size_t) {
                     if (self->closed_) return;
                     if (ec)
                       return self->fail(ec == asio::error::eof ? "closed by peer" : ec.message());
                     auto m = decode_body(self->header_buf_, self->header_, self->body_buf_,
                                          self->key_, self->incoming_, self->ctx_);
                     if (!m) return self->fail(m.error().message);
                     if (m->seq != self->recv_seq_)
                       return self->fail("frame out of sequence (replayed?)");
                     ++self->recv_seq_;
                     auto handler = self->on_message_;  // it may replace itself
                     handler(*m);
                     if (!self->closed_) self->read_header();
                   });
}

void Connection::send(MsgType type, int node_rank, int generation, nlohmann::json body) {
  if (closed_ || close_when_flushed_ || write_failed_) return;
  Message m{type, node_rank, generation, send_seq_++, std::move(body)};
  queue_.push_back(encode(m, key_, outgoing_, ctx_));
  if (queue_.size() == 1) write_next();
}

void Connection::write_next() {
  asio::async_write(socket_, asio::buffer(queue_.front()),
                    [self = shared_from_this()](boost::system::error_code ec, size_t) {
                      if (self->closed_) return;
                      if (ec) return self->write_failed(ec.message());
                      self->queue_.pop_front();
                      if (!self->queue_.empty()) return self->write_next();
                      if (self->close_when_flushed_) self->close();
                    });
}

void Connection::close(bool after_flush) {
  if (closed_) return;
  if (after_flush && !queue_.empty()) {
    close_when_flushed_ = true;
    return;
  }
  closed_ = true;  // the queue stays: a write in progress may still refer to its front
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

// A write that fails (the peer reset the connection: it closed with frames of ours unread) is
// often ready before the read of the frames the peer sent first, its last word among them (a
// node 0 that shuts down on SIGTERM says so just before it closes). While a read is under way the
// read side reports the close, after those frames; nothing more is written.
void Connection::write_failed(const std::string& why) {
  queue_.clear();  // the failed write is over: nothing refers to the front any more
  if (!reading_) return fail(why);
  write_failed_ = true;
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_send, ec);
}

void Connection::fail(const std::string& why) {
  if (closed_) return;
  close();
  auto handler = on_close_;
  if (handler) handler(why);
}

}  // namespace tv::rdzv
