// swift-tools-version:6.2
import PackageDescription

/// The libFuzzer target for Roomcast's inbound decode path: Engine.IO frames and polling
/// payloads, Socket.IO packets, their JSON and the socket events' request types.
///
/// A package of its own so that `swift build` and `swift test` of Roomcast never build it
/// (a `-sanitize=fuzzer` build instruments every dependency): `scripts/fuzz.sh` builds and runs it.
let package = Package(
    name: "roomcast-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "roomcast", path: ".."),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .executableTarget(
            name: "CodecFuzzer",
            dependencies: [
                .product(name: "SocketIO", package: "roomcast"),
                .product(name: "RoomcastServer", package: "roomcast"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                // libFuzzer supplies `main`; the target only defines `LLVMFuzzerTestOneInput`.
                .unsafeFlags(["-parse-as-library"]),
            ]
        )
    ]
)
