// CheckRequestHead in process: which request heads the service refuses before parsing, and with
// which status. (hostile_client_test.cc sends the same over sockets.)
#include "http_head.h"

#include <gtest/gtest.h>

namespace eshop {
namespace {

int StatusOf(const std::string& head, HeadLimits limits = {}) {
  const std::optional<HeadRefusal> refusal = CheckRequestHead(head, limits);
  return refusal ? refusal->status : 0;
}

const std::string kLine = "POST /tenants/acme/brands HTTP/1.1\r\nHost: x\r\n";

TEST(CheckRequestHead, AcceptsAWellFormedHead) {
  EXPECT_EQ(StatusOf(kLine + "Content-Length: 19\r\nIdempotency-Key: k\r\n\r\n"), 0);
  EXPECT_EQ(StatusOf(kLine + "Transfer-Encoding: Chunked\r\n\r\n"), 0);
  EXPECT_EQ(StatusOf(kLine + "X-Empty:\r\nX-Spaced:  a b \t\r\nX-Utf8: \xc3\xa4\r\n\r\n"), 0);
  EXPECT_EQ(StatusOf("GET /healthz HTTP/1.1\r\nHOST: x\r\n\r\n"), 0);
}

TEST(CheckRequestHead, RefusesAmbiguousMessageLengthsWith400) {
  for (const std::string fields :
       {"Content-Length: 1\r\nContent-Length: 2\r\n", "Content-Length: 1\r\nContent-Length: 1\r\n",
        "Content-Length: 1, 1\r\n", "Content-Length: +1\r\n", "Content-Length: -1\r\n",
        "Content-Length: 0x1\r\n", "Content-Length: \r\n",
        "Content-Length: 1234567890123456789\r\n",
        "Content-Length: 1\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked\r\nContent-Length: 1\r\n",
        "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
        "Transfer-Encoding: chunked, gzip\r\n", "Transfer-Encoding: gzip\r\n"}) {
    EXPECT_EQ(StatusOf(kLine + fields + "\r\n"), 400) << fields;
  }
  EXPECT_EQ(StatusOf(kLine + "Transfer-Encoding: gzip, chunked\r\n\r\n"), 501);
}

TEST(CheckRequestHead, RefusesMalformedFieldLinesWith400) {
  for (const std::string& fields : std::vector<std::string>{
           "X-Broken\r\n", "X-Space : a\r\n", " X-Lead: a\r\n", "X-Folded: a\r\n b\r\n",
           "X-Folded: a\r\n\tb\r\n", std::string("X-Nul: a\0b\r\n", 12), "X-Cr: a\rb\r\n",
           "X-Lf: a\nb\r\n", "X-Del: a\x7f\r\n", "X(paren): a\r\n", ": no name\r\n"}) {
    EXPECT_EQ(StatusOf(kLine + fields + "\r\n"), 400) << fields;
  }
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\n\r\n"), 400) << "no Host";
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"), 400) << "two Hosts";
}

TEST(CheckRequestHead, RefusesMalformedRequestLines) {
  EXPECT_EQ(StatusOf("GARBAGE\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET  / HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET /a b HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET /\xc3\xa4 HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("G(T / HTTP/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1 \r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / http/1.1\r\nHost: x\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/1.0\r\nHost: x\r\n\r\n"), 505);
  EXPECT_EQ(StatusOf("GET / HTTP/2.0\r\nHost: x\r\n\r\n"), 505);
  EXPECT_EQ(StatusOf("GET /" + std::string(100, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n",
                     {.max_target_bytes = 64}),
            414);
}

TEST(CheckRequestHead, RefusesMoreFieldsThanTheLimitWith431) {
  std::string head = "GET / HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 9; ++i) head += "X-" + std::to_string(i) + ": y\r\n";
  EXPECT_EQ(StatusOf(head + "\r\n", {.max_header_count = 10}), 0);
  EXPECT_EQ(StatusOf(head + "X-More: y\r\n\r\n", {.max_header_count = 10}), 431);
}

TEST(RequestMethod, IsTheFirstTokenOfTheRequestLine) {
  EXPECT_EQ(RequestMethod("PATCH /x HTTP/1.1\r\n"), "PATCH");
  EXPECT_EQ(RequestMethod("GARBAGE\r\n\r\n"), "");
  EXPECT_EQ(RequestMethod("G(T / HTTP/1.1\r\n"), "");
}

}  // namespace
}  // namespace eshop
