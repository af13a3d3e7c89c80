import Foundation
import StreamKitCore
import Synchronization

/// Keys given by the user (``HLSUserKeys``): put in place of the key files they cover, never fetched.
extension HLSDownloadEngine {
    /// The key the user gave for key file `file`, if any.
    func userKey(for file: PlannedFile) -> [UInt8]? {
        guard options.userKeys.key != nil || !options.userKeys.keysByURI.isEmpty else { return nil }
        let playlistURL = state.withLock { $0.renditions[file.rendition].selected.playlistURL }
        return options.userKeys.key(forURI: file.url, playlistURL: playlistURL)
    }

    /// Puts `key`, given by the user, in place as key file `index`: written into the package as a
    /// fetched key is, with no request to its URI.
    func placeUserKey(_ key: [UInt8], _ index: Int, _ file: PlannedFile) throws(HLSDownloadError) {
        guard key.count == AES128CBC.blockSize else {
            throw HLSDownloadError(
                .invalidKey, url: file.url, path: file.path,
                detail: "the key given for it is \(key.count) bytes; AES-128 keys are 16 bytes")
        }
        let finalPath = path(file.path)
        if FileManager.default.contents(atPath: finalPath).map(Array.init) != key {
            try PackageStore.writeAtomically(Data(key), to: URL(fileURLWithPath: finalPath))
        }
        state.withLock { state in
            state.keys[file.path] = key
            state.userKeyPaths.insert(file.path)
            state.books.keyFetched(index)
        }
    }

    /// Reports each key URI the user gave a key for that no planned key file has, and a key for
    /// every URI when there is no key file at all: given for nothing, probably by mistake.
    func reportUnusedUserKeys() {
        let userKeys = options.userKeys
        guard userKeys.key != nil || !userKeys.keysByURI.isEmpty else { return }
        let keyFiles = state.withLock { state in
            state.books.files.filter { $0.kind == .key }.map {
                (uri: $0.url, playlistURL: state.renditions[$0.rendition].selected.playlistURL)
            }
        }
        for uri in userKeys.unmatchedURIs(keyFiles) {
            logger.warning("a key was given for \(uri), which no playlist names")
            events.yield(.userKeyUnused(uri: uri))
        }
        if userKeys.key != nil && keyFiles.isEmpty {
            logger.warning("a key was given for every key URI, but the playlists name no key")
            events.yield(.userKeyUnused(uri: nil))
        }
    }

    /// `error` with a hint when it is a segment that did not decrypt under a key the user gave:
    /// bad padding there means the given key (or IV) is probably wrong.
    func explainingUserKey(_ error: HLSDownloadError) -> HLSDownloadError {
        guard error.kind == .decryptionFailed, let path = error.path else { return error }
        let keyURL: String? = state.withLock { state in
            guard let index = state.books.fileIndex(path),
                let keyPath = state.books.files[index].decryption?.keyPath, state.userKeyPaths.contains(keyPath),
                let keyIndex = state.books.fileIndex(keyPath)
            else { return nil }
            return state.books.files[keyIndex].url
        }
        guard let keyURL else { return error }
        return HLSDownloadError(
            .decryptionFailed, url: error.url, status: error.status, path: error.path,
            detail: error.detail + "; the key given for \(keyURL) is probably wrong"
                + (options.userKeys.iv == nil ? "" : ", or the IV given"))
    }
}
