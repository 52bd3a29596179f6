"""Streaming routes of Starlette and sse-starlette under uvicorn: servers nobody here wrote, for
StarletteStreamingTests (scripts/interop.sh starts it). The routes only pick what to send; the
framing — chunked bodies, gzip as it streams, event-stream fields, pings, retries — is the
libraries' own.
"""
import asyncio
import json

from sse_starlette.sse import EventSourceResponse, ServerSentEvent
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Route

# What the client did, by the key a test sends: streams it left, and the Last-Event-ID of each
# connection of an event source.
left = {}
last_event_ids = {}


async def events(request):
    count = int(request.query_params.get("count", "50"))
    interval = float(request.query_params.get("interval", "0"))

    async def produce():
        for number in range(count):
            yield ServerSentEvent(data=f"line one {number}\nline two {number}", event="tick", id=str(number))
            await asyncio.sleep(interval)

    # A ping (an event-stream comment) every second between slow events.
    return EventSourceResponse(produce(), ping=1)


async def endless(request):
    key = request.query_params["key"]

    async def produce():
        number = 0
        try:
            while True:
                yield ServerSentEvent(data=f"event {number}", id=str(number))
                number += 1
                await asyncio.sleep(0.01)
        except asyncio.CancelledError:
            left[key] = left.get(key, 0) + 1
            raise

    return EventSourceResponse(produce())


async def reconnecting(request):
    key = request.query_params["key"]
    last = request.headers.get("last-event-id")
    last_event_ids.setdefault(key, []).append(last)
    first = int(last) + 1 if last is not None else 0
    if first >= 9:
        return Response(status_code=204)

    async def produce():
        yield ServerSentEvent(retry=100)
        for number in range(first, first + 3):
            yield ServerSentEvent(data=f"event {number}", id=str(number))

    return EventSourceResponse(produce())


async def state(request):
    key = request.query_params["key"]
    return JSONResponse({"left": left.get(key, 0), "lastEventIDs": last_event_ids.get(key, [])})


async def json_lines(request):
    count = int(request.query_params.get("count", "500"))

    async def produce():
        for number in range(count):
            yield json.dumps({"id": number, "name": f"item {number}"}) + "\n"
            if number % 50 == 0:
                await asyncio.sleep(0.005)

    return StreamingResponse(produce(), media_type="application/jsonl")


async def text(request):
    async def produce():
        for number in range(2000):
            yield f"row {number:05d} " + "x" * 90 + "\n"

    return StreamingResponse(produce(), media_type="text/plain")


async def octets(request):
    mebibytes = int(request.query_params.get("mib", "64"))
    chunk = bytes(range(256)) * 256

    async def produce():
        for _ in range(mebibytes * 16):
            yield chunk

    return StreamingResponse(produce(), media_type="application/octet-stream")


async def answer_early(request):
    """Answers before reading the body; uvicorn then reads the rest and drops it."""
    if request.query_params.get("framing") == "chunked":

        async def produce():
            yield b"early"

        return StreamingResponse(produce(), media_type="text/plain")
    return Response(b"early", media_type="text/plain")


async def redirect(request):
    return RedirectResponse(url="/events?count=5", status_code=302)


class Echo:
    """Sends each part of the request body back as it arrives: a plain ASGI app, since a
    Starlette StreamingResponse reads the request's messages itself, to watch for a disconnect."""

    async def __call__(self, scope, receive, send):
        started = False
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            if not started:
                headers = [(b"content-type", b"application/octet-stream")]
                await send({"type": "http.response.start", "status": 200, "headers": headers})
                started = True
            more = message.get("more_body", False)
            await send({"type": "http.response.body", "body": message.get("body", b""), "more_body": more})
            if not more:
                return


app = Starlette(
    routes=[
        Route("/events", events),
        Route("/endless", endless),
        Route("/reconnecting", reconnecting),
        Route("/state", state),
        Route("/json-lines", json_lines),
        Route("/text", text),
        Route("/octets", octets),
        Route("/answer-early", answer_early, methods=["POST"]),
        Route("/redirect", redirect),
        Route("/echo", Echo(), methods=["POST"]),
    ],
    # Compresses each streamed body as it goes (not event streams) for a client that accepts gzip.
    middleware=[Middleware(GZipMiddleware, minimum_size=500)],
)
