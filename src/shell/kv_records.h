// Key-value pairs as bytes, for a node's contribution to a PMI-1 exchange: each pair is the key's
// length (4 bytes, little-endian), the key, the value's length and the value. The cross-node
// exchange only concatenates contributions, and a concatenation of such records is again a list
// of records, so no layer between the shells needs to read them.
//
//   std::string bytes = encode_kv_records({{"k", "v"}});
//   Result<std::vector<KeyValue>> back = decode_kv_records(bytes + other_node_bytes);
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"

namespace trellis {

using KeyValue = std::pair<std::string, std::string>;

std::string encode_kv_records(const std::vector<KeyValue>& pairs);
void append_kv_record(std::string& out, std::string_view key, std::string_view value);
// Errors name the byte offset of a truncated record.
Result<std::vector<KeyValue>> decode_kv_records(std::string_view bytes);

}  // namespace trellis
