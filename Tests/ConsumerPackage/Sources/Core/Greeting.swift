/// The app's own `Core` module: its name is the point, not its content.
public struct Greeting: Sendable {
    public let text: String

    public init(_ text: String) { self.text = text }
}
