# The native addons: the ping probe's ICMP echo (native/ping/ping.cc) and the C heap trim of a
# long-running node (native/memory/trim.cc). npm runs `node-gyp rebuild` for a root binding.gyp on
# install, so `npm ci` leaves build/Release/keepwatch_ping.node and keepwatch_memory.node.
{
  "targets": [
    {
      "target_name": "keepwatch_ping",
      "sources": ["native/ping/ping.cc"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api"],
      "defines": ["NAPI_VERSION=8"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"]
    },
    {
      "target_name": "keepwatch_memory",
      "sources": ["native/memory/trim.cc"],
      "dependencies": ["<!(node -p \"require('node-addon-api').targets\"):node_addon_api"],
      "defines": ["NAPI_VERSION=8"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"]
    }
  ]
}
