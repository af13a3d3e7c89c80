extension MediaPlaylist {
    /// The playlist as canonical text (see ``Playlist/serialized()``).
    public func serialized() -> String {
        var writer = PlaylistWriter(capacity: 64 + segments.count * 96)
        writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

extension MediaPlaylist {
    /// The playlist as canonical text, as ``serialized()`` gives it, handed to `emit` in pieces of
    /// about `chunkSize` bytes (a piece ends with a line): a playlist of a million segments is
    /// written to a file without its whole text, or a copy of it, in memory.
    public func serialized<Failure: Error>(
        chunkSize: Int, into emit: ([UInt8]) throws(Failure) -> Void
    ) throws(Failure) {
        try serialized(chunkSize: chunkSize, segments: { each in segments.forEach(each) }, into: emit)
    }

    /// The playlist as ``serialized(chunkSize:into:)`` writes it, with the segments `produce`
    /// hands to its argument, in order, in place of ``segments`` (which are not written): a
    /// playlist composed from other records is written without an array of its segments.
    ///
    /// Once `emit` throws, the segments still produced are dropped and the error is thrown when
    /// `produce` returns.
    public func serialized<Failure: Error>(
        chunkSize: Int, segments produce: (_ each: (MediaSegment) -> Void) -> Void,
        into emit: ([UInt8]) throws(Failure) -> Void
    ) throws(Failure) {
        var writer = PlaylistWriter(capacity: chunkSize + 4_096)
        writer.writeHeader(self)
        var isFirst = true
        var failure: Failure?
        // `emit` is only called while `produce` runs.
        withoutActuallyEscaping(emit) { emit in
            produce { segment in
                guard failure == nil else { return }
                writer.write(segment, isFirst: isFirst)
                isFirst = false
                if writer.bytes.count >= chunkSize {
                    do throws(Failure) { try emit(writer.bytes) } catch { failure = error }
                    writer.bytes.removeAll(keepingCapacity: true)
                }
            }
        }
        if let failure { throw failure }
        writer.writeEnd(self)
        if !writer.bytes.isEmpty { try emit(writer.bytes) }
    }

    /// The lines of `segments` as they follow other segments in a playlist (each one's unknown
    /// lines, tags, EXTINF and URI; no header): what a writer appends to a playlist file that
    /// grows, as a recorder does.
    public static func serializedSegments(_ segments: some Collection<MediaSegment>) -> String {
        var writer = PlaylistWriter(capacity: segments.count * 96)
        for segment in segments { writer.write(segment, isFirst: false) }
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

extension MultivariantPlaylist {
    /// The playlist as canonical text (see ``Playlist/serialized()``).
    public func serialized() -> String {
        var writer = PlaylistWriter()
        writer.write(self)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

extension Playlist {
    /// The playlist as canonical text: `#EXTM3U`, header tags, then segments (or renditions, variants and I-frame
    /// variants), with attributes in specification order, numbers in their shortest exact form, unknown tags and
    /// comments in place, and LF line ends. Parsing it gives back an equal value.
    public func serialized() -> String {
        switch self {
        case .media(let playlist): playlist.serialized()
        case .multivariant(let playlist): playlist.serialized()
        }
    }
}
