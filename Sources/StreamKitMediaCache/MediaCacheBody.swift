import Foundation
import StreamKitCore
import StreamKitHTTP
import StreamKitHTTPClient
import Synchronization

/// A read of a byte range through the cache: what the representation is, which bytes the body
/// yields, and the body.
public struct MediaCacheRead: Sendable {
    /// Where the bytes come from when the read starts.
    public enum Source: Hashable, Sendable {
        /// Every byte of the range was on disk.
        case cache
        /// Some bytes were on disk, the rest come from the origin (and are kept).
        case partial
        /// None were on disk; they come from the origin and are kept.
        case origin
        /// They come from the origin and are not kept: the resource is larger than the cap, or
        /// the origin did not tell its length.
        case passThrough
    }

    /// The representation; `nil` when the origin did not tell its length.
    public let metadata: MediaCacheMetadata?
    /// The media type, when known.
    public var mimeType: String? { metadata?.mimeType ?? passThroughMimeType }
    /// The bytes the body yields; `nil` when the length is unknown and the body is the whole response.
    public let range: ByteRange?
    /// Where the bytes come from.
    public let source: Source
    /// The bytes, in order.
    public let body: MediaCacheBody
    let passThroughMimeType: String?
}

/// The bytes of a ``MediaCacheRead``: an asynchronous sequence of chunks, from disk where cached
/// and from the origin where not. One iteration only. Dropping it (or cancelling the task that
/// reads it) ends the read, and fetches nobody else needs stop.
public struct MediaCacheBody: AsyncSequence, Sendable {
    public typealias Element = [UInt8]

    enum Source: Sendable {
        case cache(ReaderLease, ByteRange)
        case origin(HTTPClientResponse.Body, skip: Int64, limit: Int64?)
    }

    let source: Source

    /// The same bytes as parts: a file part is a range of the cache's data file, for sending
    /// with `sendfile` (`HTTPBodyWriter.write(_: HTTPFileRegion)`) instead of reading it
    /// into memory. Iterate either the body or its parts, once.
    public var parts: Parts { Parts(body: self) }

    /// Reads chunks in order.
    public struct Iterator: AsyncIteratorProtocol {
        var steps: StepIterator

        /// The next chunk (never empty), or `nil` at the end.
        ///
        /// - Throws: ``MediaCacheError`` (the origin failed, the representation changed, the
        ///   entry was removed), or `CancellationError`.
        public mutating func next() async throws -> [UInt8]? {
            switch try await steps.next() {
            case nil:
                return nil
            case .bytes(let bytes):
                return bytes
            case .disk(let range, let file, let lease):
                return try steps.readFile(range, file, lease)
            }
        }
    }

    public func makeAsyncIterator() -> Iterator { Iterator(steps: makeSteps()) }

    /// A body's bytes as parts.
    public struct Parts: AsyncSequence, Sendable {
        public typealias Element = MediaCacheBodyPart
        let body: MediaCacheBody

        /// A file part costs no memory, so it may cover this much: a reader behind the fetch
        /// (or reading what is cached) takes one step per 64 MiB rather than per 512 KiB.
        static let maximumFilePartLength: Int64 = 64 << 20

        public func makeAsyncIterator() -> Iterator {
            Iterator(steps: body.makeSteps(maximumDiskStep: Self.maximumFilePartLength))
        }

        /// Reads parts in order.
        public struct Iterator: AsyncIteratorProtocol {
            var steps: StepIterator

            /// The next part (never empty), or `nil` at the end.
            ///
            /// - Throws: as the body's iterator does.
            public mutating func next() async throws -> MediaCacheBodyPart? {
                switch try await steps.next() {
                case nil:
                    return nil
                case .bytes(let bytes):
                    return .bytes(bytes)
                case .disk(let range, let file, let lease):
                    // Close-on-exec: a player `play` starts must not keep the data file open.
                    let duplicate = fcntl(file.descriptor, F_DUPFD_CLOEXEC, 0)
                    // Out of descriptors: the step's first bytes are read instead, as a chunk
                    // iterator would read them (not the whole 64 MiB part).
                    guard duplicate >= 0 else { return .bytes(try steps.readFileStart(range, file, lease)) }
                    return .file(HTTPFileRegion(takingOwnershipOf: duplicate, range: range))
                }
            }
        }
    }

    /// A walk through the bytes; disk steps of at most `maximumDiskStep` bytes (the coordinator's
    /// bound for reads into memory when `nil`).
    func makeSteps(maximumDiskStep: Int64? = nil) -> StepIterator {
        switch source {
        case .cache(let lease, let range):
            StepIterator(
                state: .cache(lease, position: range.lowerBound, end: range.upperBound),
                maximumDiskStep: maximumDiskStep)
        case .origin(let body, let skip, let limit):
            StepIterator(state: .origin(body.makeAsyncIterator(), skip: skip, remaining: limit))
        }
    }

    /// What comes next: bytes in memory, or a range of the data file.
    enum Step {
        case bytes([UInt8])
        case disk(ByteRange, DataFileHandle, ReaderLease)
    }

    /// The walk through a body shared by its chunk and part iterators.
    struct StepIterator {
        enum State {
            case cache(ReaderLease, position: Int64, end: Int64)
            case origin(HTTPClientResponse.Body.Iterator, skip: Int64, remaining: Int64?)
            case finished
        }

        var state: State
        var maximumDiskStep: Int64?

        /// The next step (never empty), or `nil` at the end.
        mutating func next() async throws -> Step? {
            switch state {
            case .finished:
                return nil
            case .cache(let lease, let position, let end):
                do {
                    // Cached bytes need no waiting, where cancellation would otherwise be noticed.
                    try Task.checkCancellation()
                    switch try await lease.coordinator.read(lease.reader, at: position, maximumLength: maximumDiskStep)
                    {
                    case .bytes(let bytes):
                        state = .cache(lease, position: position + Int64(bytes.count), end: end)
                        return .bytes(bytes)
                    case .disk(let range, let file):
                        state = .cache(lease, position: range.upperBound, end: end)
                        return .disk(range, file, lease)
                    case .end:
                        state = .finished
                        lease.finish()
                        return nil
                    }
                } catch {
                    state = .finished
                    lease.finish()
                    throw error
                }
            case .origin(var iterator, var skip, var remaining):
                while true {
                    if let remaining, remaining <= 0 {
                        state = .finished
                        return nil
                    }
                    guard var chunk = try await iterator.next() else {
                        state = .finished
                        return nil
                    }
                    if skip > 0 {
                        let dropped = Swift.min(Int64(chunk.count), skip)
                        skip -= dropped
                        chunk.removeFirst(Int(dropped))
                        if chunk.isEmpty { continue }
                    }
                    if let left = remaining {
                        if Int64(chunk.count) > left { chunk.removeLast(chunk.count - Int(left)) }
                        remaining = left - Int64(chunk.count)
                    }
                    state = .origin(iterator, skip: skip, remaining: remaining)
                    return .bytes(chunk)
                }
            }
        }

        /// Reads the start of a disk step, at most ``ResourceFetchStateMachine/Configuration``'s
        /// default read length; the next step starts after it. On failure the read ends.
        mutating func readFileStart(
            _ range: ByteRange, _ file: DataFileHandle, _ lease: ReaderLease
        ) throws -> [UInt8] {
            let length = ResourceFetchStateMachine.Configuration().maximumReadLength
            let part = ByteRange(range.lowerBound, Swift.min(range.upperBound, range.lowerBound + length))
            let bytes = try readFile(part, file, lease)
            if case .cache(let lease, _, let end) = state { state = .cache(lease, position: part.upperBound, end: end) }
            return bytes
        }

        /// Reads a disk step's bytes; on failure the read ends.
        mutating func readFile(_ range: ByteRange, _ file: DataFileHandle, _ lease: ReaderLease) throws -> [UInt8] {
            let bytes: [UInt8]
            do {
                bytes = try DataFile.read(range, from: file.descriptor)
            } catch {
                state = .finished
                lease.finish()
                throw MediaCacheError(.storageFailed, subject: lease.url, detail: "\(error)")
            }
            guard bytes.count == Int(range.count) else {
                state = .finished
                lease.finish()
                throw MediaCacheError(
                    .representationChanged, subject: lease.url, detail: "the cached file was truncated")
            }
            return bytes
        }
    }
}

/// A part of a ``MediaCacheBody``.
public enum MediaCacheBodyPart: Sendable {
    /// Bytes in memory.
    case bytes([UInt8])
    /// A range of the cache's data file, with a descriptor of its own.
    case file(HTTPFileRegion)
}

/// One reader's hold on a resource's coordinator: released once, when the read ends or the
/// body is dropped.
final class ReaderLease: Sendable {
    let coordinator: ResourceCoordinator
    let reader: ReaderID
    let url: String
    private let onRelease: @Sendable () -> Void
    private let released = Atomic(false)

    init(coordinator: ResourceCoordinator, reader: ReaderID, url: String, onRelease: @escaping @Sendable () -> Void) {
        self.coordinator = coordinator
        self.reader = reader
        self.url = url
        self.onRelease = onRelease
    }

    /// Ends the reader and releases the coordinator.
    func finish() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let coordinator = coordinator
        let reader = reader
        let onRelease = onRelease
        Task {
            await coordinator.removeReader(reader)
            onRelease()
        }
    }

    deinit { finish() }
}
