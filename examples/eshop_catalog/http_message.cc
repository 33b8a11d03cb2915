#include "http_message.h"

#include <strings.h>

namespace eshop {

std::vector<std::string_view> HttpRequest::Values(std::string_view name) const {
  std::vector<std::string_view> values;
  for (const auto& [field, value] : headers) {
    if (field.size() == name.size() && strncasecmp(field.data(), name.data(), name.size()) == 0) {
      values.emplace_back(value);
    }
  }
  return values;
}

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
