# The ICMP echo addon of the ping probe (native/ping/ping.cc); npm runs `node-gyp rebuild` for a
# root binding.gyp on install, so `npm ci` leaves build/Release/keepwatch_ping.node.
{
  "targets": [
    {
      "target_name": "keepwatch_ping",
      "sources": ["native/ping/ping.cc"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api"],
      "defines": ["NAPI_VERSION=8"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"]
    }
  ]
}
