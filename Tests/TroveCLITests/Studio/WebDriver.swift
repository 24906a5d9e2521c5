import Foundation
import Testing
import TroveTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Headless Chromium driven through chromedriver over the W3C WebDriver
/// protocol (JSON over HTTP): a real browser running the studio's page.
final class WebDriver: @unchecked Sendable {
    private let driver: ChildProcess
    private let port: UInt16
    private let session: String
    /// Where screenshots go (`.build/studio-screenshots/`).
    static let screenshots: URL = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/studio-screenshots")
    }()

    /// The W3C name of an element reference in JSON.
    private static let elementKey = "element-6066-11e4-a52e-4f735466cecf"

    /// Finds an executable on the PATH (Debian puts both in /usr/bin).
    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map { "\($0)/\(name)" } + ["/usr/bin/\(name)"])
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts chromedriver and a headless Chromium session with a window of `width`×`height`.
    init(width: Int = 1400, height: Int = 860) throws {
        guard let chromedriver = WebDriver.executable("chromedriver"),
            let chromium = WebDriver.executable("chromium") ?? WebDriver.executable("chromium-browser")
                ?? WebDriver.executable("google-chrome")
        else {
            throw StudioFailure(
                "the browser tests need Chromium and chromedriver: `make deps-browser` installs them (apt: chromium chromium-driver)"
            )
        }
        // A random port can be taken (another test's server, or chromedriver's own
        // from a parallel suite), and a loaded machine starts it slowly: a few tries, 30 s each.
        var started: (ChildProcess, UInt16)?
        var tried: [UInt16] = []
        for _ in 0..<3 where started == nil {
            let port = UInt16.random(in: 20_000...60_000)
            tried.append(port)
            let driver = try ChildProcess(chromedriver, ["--port=\(port)"])
            // Ready when /status says so; a driver that exited (its port taken) is not waited for.
            for _ in 0..<300 where driver.isRunning {
                if let status = try? PlainHTTP.request(port: port, "GET", "/status"),
                    (status.json["value"] as? [String: Any])?["ready"] as? Bool == true
                {
                    started = (driver, port)
                    break
                }
                usleep(100_000)
            }
            if started == nil {
                driver.send(SIGKILL)
                driver.wait()
            }
        }
        guard let (driver, port) = started else {
            throw StudioFailure("chromedriver did not start on port \(tried.map(String.init).joined(separator: ", "))")
        }
        self.driver = driver
        self.port = port
        let capabilities: [String: Any] = [
            "capabilities": [
                "alwaysMatch": [
                    "browserName": "chrome",
                    "goog:chromeOptions": [
                        "binary": chromium,
                        "args": [
                            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                            "--window-size=\(width),\(height)", "--lang=en-US",
                        ],
                    ],
                ]
            ]
        ]
        let reply = try PlainHTTP.request(
            port: port, "POST", "/session", body: try JSONSerialization.data(withJSONObject: capabilities))
        guard let id = (reply.json["value"] as? [String: Any])?["sessionId"] as? String else {
            driver.send(SIGKILL)
            driver.wait()
            throw StudioFailure("chromedriver could not start Chromium: \(reply.text)")
        }
        session = id
    }

    deinit {
        _ = try? PlainHTTP.request(port: port, "DELETE", "/session/\(session)")
        _ = try? PlainHTTP.request(port: port, "GET", "/shutdown")
        for _ in 0..<40 where driver.isRunning { usleep(50_000) }
        driver.send(SIGKILL)
        driver.wait()
    }

    // MARK: Commands

    @discardableResult
    private func command(_ method: String, _ path: String, _ body: [String: Any]? = nil) throws -> Any? {
        let data = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let reply = try PlainHTTP.request(port: port, method, "/session/\(session)\(path)", body: data)
        let json = reply.json
        if reply.status != 200 {
            let value = json["value"] as? [String: Any]
            throw StudioFailure(
                "WebDriver \(method) \(path): \(value?["error"] ?? reply.status): \(value?["message"] ?? reply.text)")
        }
        return json["value"] as Any?
    }

    func open(_ address: String) throws { try command("POST", "/url", ["url": address]) }

    /// Runs `script` in the page (a function body; `arguments` holds `arguments`) and returns its result.
    @discardableResult
    func run(_ script: String, _ arguments: [Any] = []) throws -> Any? {
        try command("POST", "/execute/sync", ["script": script, "args": arguments])
    }

    /// The elements matching a CSS selector, now.
    func elements(_ selector: String) throws -> [Element] {
        let found = try command("POST", "/elements", ["using": "css selector", "value": selector]) as? [[String: Any]] ?? []
        return found.compactMap { $0[WebDriver.elementKey] as? String }.map { Element(driver: self, id: $0) }
    }

    /// Waits up to `seconds` for `condition` to hold (polling), and fails with `what` otherwise.
    func wait(_ what: String, seconds: Double = 30, _ condition: () throws -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            if (try? condition()) == true { return }
            usleep(50_000)
        }
        if try condition() { return }
        try screenshot("failed-\(what.filter { $0.isLetter || $0.isNumber }.prefix(40))")
        throw StudioFailure("timed out waiting for \(what)")
    }

    /// Waits for an element matching `selector` and returns the first.
    func element(_ selector: String, seconds: Double = 30) throws -> Element {
        var found: Element?
        try wait("an element \(selector)", seconds: seconds) {
            found = try elements(selector).first
            return found != nil
        }
        return found!
    }

    /// Clicks the first element matching `selector`, finding it again if the
    /// page redrew it in between (the grid draws its rows anew as it scrolls and refreshes).
    func click(_ selector: String, twice: Bool = false) throws {
        try wait("a click on \(selector)") {
            guard let element = try elements(selector).first else { return false }
            if twice { try element.doubleClick() } else { try element.click() }
            return true
        }
    }

    /// The text of the page's elements matching `selector`, in order.
    func texts(_ selector: String) throws -> [String] {
        try run("return Array.from(document.querySelectorAll(arguments[0])).map(e => e.textContent)", [selector])
            as? [String] ?? []
    }

    func acceptAlert() throws { try command("POST", "/alert/accept", [:]) }

    /// Saves a PNG of the window as `.build/studio-screenshots/<name>.png`.
    func screenshot(_ name: String) throws {
        guard let base64 = try command("GET", "/screenshot") as? String, let png = Data(base64Encoded: base64) else {
            throw StudioFailure("no screenshot")
        }
        try FileManager.default.createDirectory(at: WebDriver.screenshots, withIntermediateDirectories: true)
        try png.write(to: WebDriver.screenshots.appendingPathComponent("\(name).png"))
    }

    /// One element of the page.
    struct Element {
        let driver: WebDriver
        let id: String

        func click() throws { try driver.command("POST", "/element/\(id)/click", [:]) }

        /// Two clicks as a user's mouse makes them (a `dblclick` event).
        func doubleClick() throws {
            try pointer([
                ["type": "pointerDown", "button": 0], ["type": "pointerUp", "button": 0],
                ["type": "pointerDown", "button": 0], ["type": "pointerUp", "button": 0],
            ])
        }

        /// Presses the mouse on the element, moves it `dx` pixels to the right and lets go, as a user drags.
        func drag(by dx: Int) throws {
            try pointer([
                ["type": "pointerDown", "button": 0],
                ["type": "pointerMove", "origin": "pointer", "x": dx / 2, "y": 0, "duration": 50],
                ["type": "pointerMove", "origin": "pointer", "x": dx - dx / 2, "y": 0, "duration": 50],
                ["type": "pointerUp", "button": 0],
            ])
        }

        /// Moves the mouse onto the element, then performs `steps` (W3C pointer actions).
        private func pointer(_ steps: [[String: Any]]) throws {
            let reference: [String: Any] = [WebDriver.elementKey: id]
            let actions: [String: Any] = [
                "actions": [
                    [
                        "type": "pointer", "id": "mouse", "parameters": ["pointerType": "mouse"],
                        "actions": [["type": "pointerMove", "origin": reference, "x": 0, "y": 0]] + steps,
                    ]
                ]
            ]
            try driver.command("POST", "/actions", actions)
        }

        /// Types `text` into the element (`\u{E007}` is Enter, `\u{E009}` Control).
        func type(_ text: String) throws { try driver.command("POST", "/element/\(id)/value", ["text": text]) }

        func clear() throws { try driver.command("POST", "/element/\(id)/clear", [:]) }

        var text: String {
            get throws { try driver.command("GET", "/element/\(id)/text") as? String ?? "" }
        }

        var isDisplayed: Bool {
            get throws { try driver.command("GET", "/element/\(id)/displayed") as? Bool ?? false }
        }
    }
}
