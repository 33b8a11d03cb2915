#include "http_reply.h"

namespace eshop {

nlohmann::json ErrorBody(std::string_view code, std::string_view message) {
  return nlohmann::json{{"code", code}, {"message", message}};
}

std::string DumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpReply JsonReply(int status, const nlohmann::json& body) {
  HttpReply reply;
  reply.status = status;
  reply.body = DumpJson(body);
  return reply;
}

HttpReply ErrorReply(int status, std::string_view code, std::string_view message) {
  return JsonReply(status, ErrorBody(code, message));
}

}  // namespace eshop
