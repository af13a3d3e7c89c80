import Foundation
import StreamKitCore
import StreamKitDASH
import StreamKitDownloads
import StreamKitHLS
import StreamKitHTTP
import StreamKitHTTPClient
import StreamKitMediaServer
import Synchronization

/// The download queue as `streamkit serve` lets the page and `/api/` change it: the words of
/// `streamkit queue add/start/stop/retry/remove/config`, performed by serve's own manager with
/// `--run-queue`, else directly or through the process that runs the queue (``QueueAccess``).
struct ServeQueueControl: Sendable {
    let home: URL
    let libraryRoot: String
    /// Serve's own manager (`--run-queue`), which runs the tasks.
    let manager: DownloadManager?
    let environment: [String: String]
    /// Performs direct changes one after another.
    let serial = SerialTasks()

    var control: QueueControl {
        QueueControl(
            perform: { try await perform($0) },
            task: { try QueueSummaries.task(home: home, libraryRoot: libraryRoot, id: $0) },
            status: { try await status() },
            inspect: { try await inspect($0) })
    }

    func perform(_ action: QueueAction) async throws -> QueueActionResult {
        let command: DownloadQueueCommand
        switch action {
        case .add(let addition): command = .add(try await request(addition), autoStart: addition.start)
        case .start(let id): command = .start(id)
        case .stop(let id): command = .stop(id)
        case .retry(let id): command = .retry(id)
        case .remove(let id, let keepFiles): command = .remove(id, keepFiles: keepFiles)
        case .setTitle(let id, let title): command = .setTitle(id, title: title)
        case .setConcurrency(let count):
            guard (1...16).contains(count) else {
                throw QueueControlError(.badRequest, "the tasks at once are 1 to 16, not \(count)")
            }
            command = .configure(DownloadQueueSettings(maximumConcurrentDownloads: count))
        }
        let answer = try await send(command)
        let library = QueueSummaries.libraryPrefix(libraryRoot)
        return QueueActionResult(
            tasks: answer.tasks.map { QueueSummaries.summary($0, library: library) }, removed: answer.removed)
    }

    /// Read from the index, like the queue's lists: nothing is locked or written.
    func status() async throws -> QueueStatus {
        let settings: DownloadQueueSettings
        do {
            settings = try DownloadQueueRemote.settings(directory: home)
        } catch {
            throw QueueControlError(.internalServerError, "\(error)")
        }
        return QueueStatus(
            isRunning: manager != nil || DownloadQueueRemote.isRunning(directory: home),
            maximumConcurrentDownloads: settings.maximumConcurrentDownloads ?? 1, autoStart: settings.autoStart ?? false
        )
    }

    private func send(_ command: DownloadQueueCommand) async throws -> DownloadQueueAnswer {
        let answer: DownloadQueueAnswer
        do {
            if let manager {
                answer = await manager.perform(command)
            } else {
                // One at a time: each opens the queue (holding its lock) when nobody runs it, and
                // a second one meanwhile would post to a runner that does not exist.
                answer = try await serial.run { try await QueueAccess.perform(command, directory: home) }
            }
        } catch let error as DownloadManagerError {
            throw QueueControlError(Self.status(error.kind.description), "\(error)")
        } catch {
            throw QueueControlError(.internalServerError, "\(error)")
        }
        if let error = answer.error { throw QueueControlError(Self.status(answer.errorKind), error) }
        return answer
    }

    /// The status a failure of the queue's kind answers with.
    static func status(_ kind: String?) -> HTTPStatus {
        switch kind {
        case DownloadManagerError.Kind.unknownTask.description: .notFound
        case DownloadManagerError.Kind.illegalTransition.description,
            DownloadManagerError.Kind.duplicateTask.description:
            HTTPStatus(409)
        case DownloadManagerError.Kind.invalidArgument.description: .badRequest
        case DownloadManagerError.Kind.noAnswer.description: .serviceUnavailable
        default: .internalServerError
        }
    }

    /// The task `addition` asks for, as `queue add` makes it from the same words.
    private func request(_ addition: QueueAddition) async throws -> DownloadRequest {
        try Self.checkURL(addition.url)
        guard let variant = VariantPreference(argument: addition.variant ?? "best") else {
            throw QueueControlError(
                .badRequest, VariantPreference.invalidValueMessage(addition.variant!, for: "variant"))
        }
        guard let audio = AudioPreference(argument: addition.audio ?? "auto") else {
            throw QueueControlError(.badRequest, AudioPreference.invalidValueMessage(addition.audio!, for: "audio"))
        }
        guard let subtitles = SubtitlePreference(argument: addition.subtitles ?? "all") else {
            throw QueueControlError(
                .badRequest, SubtitlePreference.invalidValueMessage(addition.subtitles!, for: "subtitles"))
        }
        let kind: DownloadKind
        switch addition.kind ?? "auto" {
        case "hls": kind = .hls
        case "dash": kind = .dash
        case "file": kind = .file
        case "auto": kind = try await sourceKind(addition.url)
        case let other: throw QueueControlError(.badRequest, "kind is auto, hls, dash or file, not \(other)")
        }
        let title = addition.title?.trimmingCharacters(in: .whitespacesAndNewlines)
        return DownloadRequest(
            url: addition.url, kind: kind,
            selection: HLSSelection(variant: variant, audio: audio.rendition, subtitles: subtitles.rendition),
            title: title?.isEmpty == false ? title : nil)
    }

    /// What the source at `url` offers: its variants and renditions when it is an HLS playlist,
    /// its video Representations and audio and text AdaptationSets (read as HLS) when it is an MPD.
    func inspect(_ url: String) async throws -> QueueSourceChoices {
        try Self.checkURL(url)
        guard try await sourceKind(url).isPackage else { return QueueSourceChoices(kind: "file") }
        let loaded: LoadedPlaylist
        do {
            loaded = try await PlaylistLoader.load(url)
        } catch {
            throw QueueControlError(HTTPStatus(502), "\(error)")
        }
        // What the bytes are, whatever the URL's extension said.
        let kind: DownloadKind = MPD.looksLikeMPD(Array(loaded.bytes.prefix(4096))) ? .dash : .hls
        let playlist: MultivariantPlaylist
        if kind == .dash {
            guard let mpd = try? MPD.parse(loaded.bytes) else {
                throw QueueControlError(HTTPStatus(502), "\(url) is not an MPD StreamKit can read")
            }
            playlist = DASHPresentation(mpd: mpd, mpdURL: loaded.url.absoluteString).multivariant()
        } else {
            let parsed: ParsedPlaylist
            do {
                parsed = try Playlist.parse(
                    loaded.bytes, options: PlaylistParseOptions(strictness: .lenient, playlistURL: loaded.url))
            } catch {
                throw QueueControlError(HTTPStatus(502), "\(url) is not a playlist StreamKit can read")
            }
            guard case .multivariant(let multivariant) = parsed.playlist else {
                return QueueSourceChoices(kind: kind.rawValue)
            }
            playlist = multivariant
        }
        let variants = playlist.variants.sorted { $0.bandwidth > $1.bandwidth }.map { variant in
            QueueSourceChoices.Variant(
                bandwidth: variant.bandwidth,
                resolution: variant.resolution.map { "\($0.width)x\($0.height)" }, codecs: variant.codecs,
                choice: "\(variant.bandwidth)")
        }
        func renditions(_ type: RenditionType) -> [QueueSourceChoices.Rendition] {
            var seen = Set<String>()
            return playlist.renditions.filter { $0.type == type && seen.insert($0.name).inserted }.map {
                QueueSourceChoices.Rendition(name: $0.name, language: $0.language)
            }
        }
        let title = playlist.sessionData.first { $0.dataID == "com.apple.hls.title" }?.value
        return QueueSourceChoices(
            kind: kind.rawValue, variants: variants, audio: renditions(.audio), subtitles: renditions(.subtitles),
            title: title)
    }

    private func sourceKind(_ url: String) async throws -> DownloadKind {
        let client = try HTTPClient(configuration: HTTPClientConfiguration(environment: environment))
        let result = await SourceProbe.kind(of: url, client: client, headers: HTTPHeaders(), retry: .default)
        await client.shutdown()
        return result
    }

    private static func checkURL(_ url: String) throws {
        let scheme = url.prefix(while: { $0 != ":" }).lowercased()
        guard scheme == "http" || scheme == "https", URLComponents(string: url)?.host?.isEmpty == false else {
            throw QueueControlError(.badRequest, "the URL must be http or https, not '\(url.prefix(200))'")
        }
        if URLUserInfo.isPresent(in: url) { throw QueueControlError(.badRequest, URLUserInfo.refusal) }
    }
}

/// Runs async work one piece after another, in the order asked.
final class SerialTasks: Sendable {
    private let last = Mutex<Task<Void, Never>?>(nil)

    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task: Task<T, any Error> = last.withLock { last in
            let previous = last
            let task = Task { () async throws -> T in
                await previous?.value
                return try await body()
            }
            last = Task { _ = try? await task.value }
            return task
        }
        return try await task.value
    }
}
