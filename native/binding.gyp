{
  "targets": [
    {
      "target_name": "voxgate_native",
      "sources": [
        "src/addon.cc",
        "src/g711.cc",
        "src/frame.cc",
        "src/resampler.cc",
        "src/noise-suppressor.cc",
        "src/opus.cc",
        "src/socket-options.cc",
        "src/datagram-reader.cc",
        "src/scheduling.cc",
        "src/srtp.cc",
        "src/srtp-context.cc",
        "src/dtls.cc",
        "src/dtls-context.cc",
        "src/dtls-certificate.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17"],
      "cflags_cc": [
        "-std=c++17",
        "-fexceptions",
        "-Wall",
        "-Wextra",
        "<!@(pkg-config --cflags speexdsp webrtc-audio-processing opus)"
      ],
      "libraries": ["<!@(pkg-config --libs speexdsp webrtc-audio-processing opus)"]
    }
  ]
}
