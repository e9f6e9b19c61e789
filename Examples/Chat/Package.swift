// swift-tools-version:6.2
import PackageDescription

// A chat server on the SocketIOServer library, built against this checkout as another package
// would use it: `swift run --package-path Examples/Chat chat --port 3000`.
let package = Package(
    name: "Chat",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "roomcast", path: "../..")],
    targets: [
        .executableTarget(name: "chat", dependencies: [.product(name: "SocketIOServer", package: "roomcast")], path: "Sources/Chat")
    ]
)
