// One authenticated, framed TCP connection of the rendezvous protocol
// (launcher/rendezvous/rdzv_protocol.h), used by both ends: reads frames one at a time, checks each
// (header, tag, payload, sequence number) and hands it on; queues outgoing frames and writes them
// in order.
//
// The first bad frame closes the connection and reports why once through `on_close`; nothing of
// it reaches `on_message`. A failed write is reported by the read side, after the frames the peer
// sent before the connection died. `close()` by the owner reports nothing. Lifetime: held by
// shared_ptr; pending operations keep it alive. Single-threaded (the io_context's thread).
#pragma once

#include <boost/asio/ip/tcp.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <string>

#include "launcher/rendezvous/rdzv_protocol.h"

namespace tv::rdzv {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using OnMessage = std::function<void(const Message&)>;
  using OnClose = std::function<void(const std::string& why)>;

  // `incoming`: the direction of the frames this end reads.
  Connection(boost::asio::ip::tcp::socket socket, std::string key, Direction incoming);

  void start(OnMessage on_message, OnClose on_close);
  // New handlers for the frames that follow (e.g. once a peer has joined).
  void rebind(OnMessage on_message, OnClose on_close);
  // The session context that tags every later frame (both directions).
  void set_context(const Context& ctx) { ctx_ = ctx; }
  // Queues one frame with the next sequence number; ignored once closed.
  void send(MsgType type, int node_rank, int generation,
            nlohmann::json body = nlohmann::json::object());
  // Closes now, or once the queued frames are written (`after_flush`).
  void close(bool after_flush = false);
  bool closed() const { return closed_; }
  bool idle() const { return closed_ || queue_.empty(); }
  const std::string& peer() const { return peer_; }

 private:
  void read_header();
  void read_body();
  void write_next();
  void write_failed(const std::string& why);
  void fail(const std::string& why);

  boost::asio::ip::tcp::socket socket_;
  std::string key_;
  Direction incoming_;
  Direction outgoing_;
  Context ctx_{};
  std::string peer_;
  OnMessage on_message_;
  OnClose on_close_;
  std::array<uint8_t, kHeaderSize> header_buf_{};
  std::vector<uint8_t> body_buf_;
  Header header_;
  uint32_t recv_seq_ = 0;
  uint32_t send_seq_ = 0;
  std::deque<std::string> queue_;
  bool closed_ = false;
  bool close_when_flushed_ = false;
  bool reading_ = false;       // start() began the read loop
  bool write_failed_ = false;  // the read side reports the close
};

}  // namespace tv::rdzv
