import Metrics

/// What was built: `roomcast --version` prints it, `roomcast_build_info` exports it.
public enum RoomcastBuild {
    /// The release this build is, or leads to (`-dev` until it is released): the heading
    /// CHANGELOG.md moves its Unreleased entries under.
    public static let version = "0.2.0-dev"

    /// `roomcast_build_info{version}`: always 1, for joining a node's other series with its version.
    static let info = Meter(label: "roomcast_build_info", dimensions: [("version", version)])
}
