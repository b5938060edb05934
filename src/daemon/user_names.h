// The name of a user id, from the system's user database (getpwuid_r), remembered for a minute:
// the controller names the owner of every job it takes, and a lookup reads /etc/passwd (or asks
// NSS: LDAP, SSSD) each time, a file's open and read per submission under a stream of them.
// A user renamed or added is seen within the minute. Thread-safe.
//
//   std::string name = user_name(1000);   // "alice", or "1000" when the id has no user
#pragma once

#include <string>

namespace trellis {

std::string user_name(int uid);

}  // namespace trellis
