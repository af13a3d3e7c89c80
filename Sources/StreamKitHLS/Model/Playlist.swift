/// A parsed HLS playlist: multivariant or media (RFC 8216bis §4.1: which one is decided by its tags).
public enum Playlist: Hashable, Sendable {
    /// A multivariant (master) playlist.
    case multivariant(MultivariantPlaylist)
    /// A media playlist.
    case media(MediaPlaylist)

    /// The media playlist, if this is one.
    public var media: MediaPlaylist? {
        if case .media(let playlist) = self { return playlist }
        return nil
    }

    /// The multivariant playlist, if this is one.
    public var multivariant: MultivariantPlaylist? {
        if case .multivariant(let playlist) = self { return playlist }
        return nil
    }

    /// EXT-X-VERSION, when written.
    public var version: Int? {
        switch self {
        case .media(let playlist): playlist.version
        case .multivariant(let playlist): playlist.version
        }
    }
}
