import Foundation

/// The files of tasks: names, sizes, deletion.
extension DownloadManager {
    /// Deletes what `info` stored: its own folder, or only what it wrote in a place the user chose.
    func deleteFiles(of info: DownloadTaskInfo) {
        guard info.ownsFolder else {
            // A place the user chose (`streamkit download -o`): only what the task wrote there.
            if info.kind.isPackage {
                let manifest = URL(fileURLWithPath: info.location).appendingPathComponent(PackageLayout.manifestName)
                if FileManager.default.fileExists(atPath: manifest.path) {
                    try? FileManager.default.removeItem(atPath: info.location)
                }
                return
            }
            for suffix in ["", ".streamkit-partial", ".streamkit-resume", ".streamkit-ranges"] {
                try? FileManager.default.removeItem(atPath: info.location + suffix)
            }
            return
        }
        let target =
            info.kind == .file ? URL(fileURLWithPath: info.location).deletingLastPathComponent().path : info.location
        try? FileManager.default.removeItem(atPath: target)
    }

    /// A file name for a download of `url`: its last path component, decoded, made safe.
    static func fileName(fromURL url: String) -> String {
        let path = URLComponents(string: url)?.path ?? ""
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        let cleaned = String(
            (last.removingPercentEncoding ?? last).map { $0 == "/" || $0 == "\\" || $0.asciiValue == 0 ? "_" : $0 })
        if cleaned.isEmpty || cleaned == "." || cleaned == ".." { return "download" }
        return cleaned
    }

    /// The bytes at `path`: a file's size, or the sum of the regular files in a folder.
    static func byteCount(at path: String) -> Int64 {
        var total: Int64 = 0
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return 0 }
        if !isDirectory.boolValue {
            return (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? 0
        }
        let enumerator = FileManager.default.enumerator(atPath: path)
        while let name = enumerator?.nextObject() as? String {
            if let size = enumerator?.fileAttributes?[.size] as? Int64,
                enumerator?.fileAttributes?[.type] as? FileAttributeType == .typeRegular, !name.isEmpty
            {
                total += size
            }
        }
        return total
    }
}
