import Foundation
import ShopDomain
import Strata

/// The catalogue's endpoints.
public enum ProductEndpoints {
    /// `GET products?category=…&tags[]=…&page=…&per_page=…`
    public static func list(_ query: ProductQuery) -> Endpoint<ProductPageDTO> {
        var parameters: [String: ParameterValue] = [
            "page": .int(query.page), "per_page": .int(query.pageSize),
        ]
        if let category = query.category { parameters["category"] = .string(category) }
        if !query.tags.isEmpty { parameters["tags"] = .array(query.tags.map { .string($0) }) }
        return Endpoint(path: "products", queryParameters: parameters)
    }

    /// `POST inventory/query` with an XML body, answered in XML.
    public static func stockLevel(of productID: Int) -> Endpoint<StockLevelDTO> {
        Endpoint(
            path: "inventory/query",
            method: .post,
            bodyParametersEncodable: StockQueryDTO(productID: productID),
            bodyEncoding: XMLEncoding(rootElement: "inventoryQuery"),
            responseDecoder: XMLResponseDecoder()
        )
    }
}

/// The order endpoints.
public enum OrderEndpoints {
    /// `POST orders` with a JSON body.
    public static func place(productID: Int, quantity: Int) -> Endpoint<OrderDTO> {
        Endpoint(
            path: "orders", method: .post,
            bodyParametersEncodable: NewOrderDTO(product_id: productID, quantity: quantity))
    }

    /// `GET orders/{id}/tracking`: a Server-Sent Events stream of the order's delivery steps.
    public static func tracking(orderID: String) -> Endpoint<Void> {
        Endpoint(path: "orders/\(orderID)/tracking", options: RequestOptions(streamIdleTimeout: 30))
    }

    /// `GET reports/sales`, which the server takes a few seconds to answer.
    public static func salesReport() -> Endpoint<SalesReportDTO> {
        Endpoint(path: "reports/sales", timeoutInterval: 30)
    }
}

/// The newsletter endpoints.
public enum NewsletterEndpoints {
    /// `POST newsletter/subscriptions` as an HTML form (`application/x-www-form-urlencoded`).
    public static func subscribe(email: String, topics: [String]) -> Endpoint<SubscriptionDTO> {
        Endpoint(
            path: "newsletter/subscriptions",
            method: .post,
            bodyParameters: ["email": .string(email), "topics": .array(topics.map { .string($0) })],
            bodyEncoding: URLEncoding(destination: .httpBody, arrayEncoding: .noBrackets)
        )
    }
}

/// The attachment endpoints.
public enum AttachmentEndpoints {
    /// `POST attachments` as `multipart/form-data`: a caption and the file, streamed from disk.
    public static func upload(
        fileURL: URL, caption: String, progress: @escaping @Sendable (Progress) -> Void
    ) throws(MultipartError) -> Endpoint<UploadReceiptDTO> {
        var form = MultipartFormData()
        try form.append(fileURL: fileURL, name: "file")
        return Endpoint(
            path: "attachments",
            method: .post,
            bodyParameters: ["caption": .string(caption)],
            bodyEncoding: MultipartEncoding(form: form),
            options: RequestOptions(uploadProgress: progress)
        )
    }
}

/// Sign-in and the account behind it.
public enum AccountEndpoints {
    /// `POST auth/token` with a password grant, as a form.
    public static func signIn(user: String, password: String) -> Endpoint<TokensDTO> {
        Endpoint(
            path: "auth/token",
            method: .post,
            bodyParameters: ["grant_type": "password", "username": .string(user), "password": .string(password)],
            bodyEncoding: URLEncoding.httpBody
        )
    }

    /// `POST auth/token` with a refresh-token grant, as a form.
    public static func refresh(_ refreshToken: String) -> Endpoint<TokensDTO> {
        Endpoint(
            path: "auth/token",
            method: .post,
            bodyParameters: ["grant_type": "refresh_token", "refresh_token": .string(refreshToken)],
            bodyEncoding: URLEncoding.httpBody
        )
    }

    /// `GET account`, which needs a valid access token.
    public static func account() -> Endpoint<AccountDTO> {
        Endpoint(path: "account")
    }
}
