"""The sessions REST API: capture, append, events, import, read, export, delete, restore.

The views raise the domain's errors (a capture refused, an unreadable file, a session not in
the state an action needs); ``core.api_errors`` answers them, in one place."""

from __future__ import annotations

from django.db import transaction
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiRequest,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import exceptions, mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.filters import OrderingFilter
from rest_framework.parsers import BaseParser, FormParser, MultiPartParser
from rest_framework.response import Response

from core.openapi import error
from sessions import visibility
from sessions.api.anonymize import (
    AnonymizeOutcomeSerializer,
    AnonymizeRequestSerializer,
    poke_after,
    read_request,
)
from sessions.api.deletions import DeletionActions
from sessions.api.errors import SessionNotFound
from sessions.api.filters import SessionFiltersBackend
from sessions.api.pagination import MessageCursorPagination, SessionCursorPagination
from sessions.api.parsers import JSONParser
from sessions.api.schema import (
    AppendResultSerializer,
    CaptureResultSerializer,
    CompactionResultSerializer,
    CompactRequestSerializer,
    PinSerializer,
    SizeBreakdownSerializer,
)
from sessions.api.serializers import (
    AppendMessagesSerializer,
    ImportResultSerializer,
    MessageSerializer,
    SessionCaptureSerializer,
    SessionPatchSerializer,
    SessionSerializer,
    check_parsed_lengths,
    unzip_limits,
)
from sessions.capture.quota import HEADER as QUOTA_HEADER
from sessions.capture.quota import quota_state, worst_header
from sessions.capture.service import append_messages as append_to_session
from sessions.capture.service import capture_session, capture_sessions
from sessions.enrich.pipeline import broker_queue_depth, pipeline_state
from sessions.filters import FiltersSerializer
from sessions.forget.anonymize import anonymize_session, start_run
from sessions.forget.archive import unarchive
from sessions.forget.compaction import compact_on_request, set_pinned
from sessions.forget.lifecycle import (
    ALIVE_STATE,
    LifecycleConflict,
    purge,
    restore,
    soft_delete,
)
from sessions.forget.read_counts import opened, record_access
from sessions.forget.size import size_breakdown
from sessions.models import KEYWORD_VECTORS, Message, Session
from sessions.portable.attachments import load_parsed as load_attachments
from sessions.portable.session_export import FORMATS as EXPORT_FORMATS
from sessions.portable.session_export import UnknownExportFormat, export_response
from teams.access import Reading
from teams.models import Role, TokenPermission
from teams.viewsets import ScopedAPIView, ScopedViewSet
from transcripts import FORMATS, parse


class RawBodyParser(BaseParser):
    """Any other media type: the view reads the raw bytes itself (import, NDJSON events)."""

    media_type = "*/*"

    def parse(self, stream, media_type=None, parser_context=None):
        return stream.read() if stream is not None else b""


class NdjsonParser(RawBodyParser):
    """Newline-delimited JSON, read raw: the importer decodes it line by line."""

    media_type = "application/x-ndjson"


def query_flag(request, name: str) -> bool:
    """A yes/no query parameter (true/false, 1/0, yes/no; empty or absent is no)."""
    raw = request.query_params.get(name, "")
    if raw == "":
        return False
    try:
        return serializers.BooleanField().to_internal_value(raw)
    except exceptions.ValidationError:
        raise exceptions.ValidationError({name: f"must be true or false, not {raw!r}"}) from None


def capture_file(project, data: bytes, ownership, **how) -> tuple[list, list]:
    """Read an uploaded transcript (``how``: the importers' ``parse`` options) and capture
    its sessions, new ones with ``ownership``; what the importer read is held to the
    columns' lengths first."""
    parsed = parse(data, **how)
    check_parsed_lengths(parsed)
    # One transaction: an export's memories that cannot be written undo its messages too.
    with transaction.atomic():
        results = capture_sessions(project, parsed, ownership)
        for result, session in zip(results, parsed, strict=True):
            result.attachments = load_attachments(result.session, session)
    return parsed, results


def with_quota_header(response: Response, header: str | None) -> Response:
    """``X-Quota-Warning`` when a session the request wrote to is past its warning share."""
    if header:
        response[QUOTA_HEADER] = header
    return response


def imported(fmt: str, results, skipped: dict[str, int]) -> Response:
    response = Response(
        ImportResultSerializer({"format": fmt, "sessions": results, "skipped": skipped}).data,
        status=status.HTTP_201_CREATED,
    )
    return with_quota_header(response, worst_header([result.quota for result in results]))


@extend_schema_view(retrieve=extend_schema(responses=SessionSerializer))
class SessionViewSet(
    DeletionActions,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    ScopedViewSet,
):
    """Sessions of the caller's projects. ``{id}`` is the session's public id."""

    base_queryset = Session.objects.select_related("project", "project__team")
    parser_classes = [JSONParser]
    lookup_field = "public_id"
    lookup_url_kwarg = "id"
    serializer_class = SessionSerializer
    pagination_class = SessionCursorPagination
    filter_backends = [SessionFiltersBackend, OrderingFilter]
    ordering_fields = ["started_at", "ended_at", "message_count", "size_bytes"]

    def get_object(self):
        try:
            return super().get_object()
        except Http404:
            raise SessionNotFound() from None

    # What reads or edits a session's messages; the rest (its metadata, retention, quota,
    # deleting the whole session) the team's admins may do to a session they do not read
    # (docs/visibility.md).
    content_actions = frozenset({"messages", "pin_message", "remove_message", "export"})

    @property
    def scope_reading(self) -> Reading:
        return Reading.CONTENT if self.action in self.content_actions else Reading.LISTED

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "access": self.access}

    def get_queryset(self):
        queryset = super().get_queryset()
        if self.action == "list":
            trash = query_flag(self.request, "deleted")
            queryset = queryset.in_trash() if trash else queryset.alive()
        return queryset

    @extend_schema(
        parameters=[
            FiltersSerializer,
            OpenApiParameter("deleted", OpenApiTypes.BOOL, description="list the trash"),
            OpenApiParameter(
                "ordering",
                OpenApiTypes.STR,
                description="started_at, ended_at, message_count or size_bytes; '-' for "
                "descending (default -started_at)",
            ),
        ]
    )
    def list(self, request, *args, **kwargs):
        return super().list(request, *args, **kwargs)

    @extend_schema(
        request=SessionCaptureSerializer,
        responses={201: CaptureResultSerializer, 200: CaptureResultSerializer, 409: error(409)},
        description="Capture a whole session, e.g. when an agent's run ends. Answers 201 "
        "with a new session, or 200 with the existing one when its external_id "
        "is known: then only messages it does not hold yet are appended (by client_id, or by "
        "position when messages carry none) and fields sent again are updated.",
    )
    def create(self, request):
        payload = SessionCaptureSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        project = self.resolve_project(payload.validated_data.get("project"))
        ownership = visibility.for_capture(
            self.access, project, payload.validated_data.get("visibility")
        )
        result = capture_session(project, payload.to_parsed(), ownership)
        body = SessionSerializer(result.session, context={"access": self.access}).data
        body["messages_added"] = len(result.added)
        body["duplicates_skipped"] = result.duplicates
        body["quota"] = result.quota.as_dict()
        code = status.HTTP_201_CREATED if result.created else status.HTTP_200_OK
        return with_quota_header(Response(body, status=code), result.quota.header())

    def retrieve(self, request, *args, **kwargs):
        """The session (opening an archived one brings it back in full)."""
        session = self.get_object()
        if self.access.reading(session) == Reading.CONTENT:
            opened(session)  # a read of its content keeps it (an admin's look does not)
        return Response(self.get_serializer(session).data)

    @extend_schema(
        request=SessionPatchSerializer,
        responses={200: SessionSerializer, 400: error(400), 409: error(409)},
        description="Change what a person or agent may change after capture (the text is "
        "redacted as at capture). lifecycle 'archived' archives the session now, 'active' "
        "brings an archived one back; 409 when the session is in the trash.",
    )
    def partial_update(self, request, id=None):
        session = self.get_object()
        self.require(Role.MEMBER, session.team_id)
        payload = SessionPatchSerializer(
            session,
            data=request.data,
            partial=True,
            context={"by": request.user, "access": self.access},
        )
        payload.is_valid(raise_exception=True)
        payload.save()
        return Response(self.get_serializer(session).data)

    @extend_schema(
        parameters=[
            OpenApiParameter("reason", OpenApiTypes.STR, description="why (kept with it)"),
            OpenApiParameter(
                "purge", OpenApiTypes.BOOL, description="delete a trashed session for good"
            ),
        ],
        responses={204: None, 409: error(409)},
    )
    def destroy(self, request, id=None):
        """Move to the trash (restorable for the project's trash days), or purge from it."""
        session = self.get_object()
        self.require(Role.ADMIN, session.team_id)
        if query_flag(request, "purge"):
            purge(session)
        else:
            soft_delete(session, by=request.user, reason=request.query_params.get("reason", ""))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=None,
        responses={200: SessionSerializer, 409: error(409)},
        description="Bring a session back: out of the trash (admins), or out of the archive "
        "(members: its messages are embedded again, so search by meaning finds them in a "
        "moment). 409 when it is neither in the trash nor archived.",
    )
    @action(detail=True, methods=["post"])
    def restore(self, request, id=None):
        session = self.get_object()
        if session.deleted_at is not None:
            self.require(Role.ADMIN, session.team_id)
            restore(session)
            unarchive(session)  # out of the trash in full, if it was archived too
        else:
            self.require(Role.MEMBER, session.team_id)
            if not unarchive(session):
                raise LifecycleConflict(
                    f"session {session.public_id} is neither in the trash nor archived "
                    f"(it is {session.lifecycle})",
                    {**ALIVE_STATE, "lifecycle": session.lifecycle},
                )
        return Response(self.get_serializer(session).data)

    @extend_schema(
        request=AnonymizeRequestSerializer,
        responses={200: AnonymizeOutcomeSerializer, 403: error(403)},
        description="Replace people's names, project names, file paths, e-mail addresses, "
        "phone numbers and IP addresses in the session by placeholders (the same ones across "
        "its project). With dry_run (the default), only say what would change. Admins, or a "
        "token with the delete permission.",
    )
    @action(detail=True, methods=["post"])
    def anonymize(self, request, id=None):
        session = self.get_object()
        self.require(Role.ADMIN, session.team_id)
        payload = read_request(request.data)
        dry_run = payload.validated_data["dry_run"]
        run = start_run(session.project, payload.config(), dry_run=dry_run)
        outcome = poke_after(anonymize_session(session, run, by=request.user))
        return Response(AnonymizeOutcomeSerializer(outcome.as_dict()).data)

    @extend_schema(
        methods=["GET"],
        responses=MessageSerializer(many=True),
        filters=False,  # the session list's filters are not message filters
        description="The session's messages in order, paginated by cursor (?limit=).",
    )
    @extend_schema(
        methods=["POST"],
        request=AppendMessagesSerializer,
        responses={201: AppendResultSerializer, 409: error(409)},
        description="Append one or many messages (or one message sent bare, without the "
        "'messages' list). A message whose client_id the session already holds is not stored "
        "again (safe retries); the answer lists the messages added, in order. 409 when the "
        "session is in the trash.",
    )
    @action(detail=True, methods=["get", "post"], pagination_class=MessageCursorPagination)
    def messages(self, request, id=None):
        if request.method == "GET":
            session = self.get_object()
            opened(session)
            # The keyword vectors are large and not shown.
            messages = Message.objects.of_session(session).defer(*KEYWORD_VECTORS)
            paginator = MessageCursorPagination()
            page = paginator.paginate_queryset(messages, request, view=self)
            return paginator.get_paginated_response(MessageSerializer(page, many=True).data)
        data = request.data
        if isinstance(data, dict) and "messages" not in data:
            data = {"messages": [data]}  # one message, sent bare
        payload = AppendMessagesSerializer(data=data)
        payload.is_valid(raise_exception=True)
        # The session is found in the caller's scope and locked by one query (not looked up,
        # then locked again): the role is checked on the locked row, before any write.
        try:
            result = append_to_session(
                self.get_queryset().filter(public_id=id),
                payload.to_parsed(),
                check=lambda session: self.require(Role.MEMBER, session.team_id),
            )
        except Session.DoesNotExist:
            raise SessionNotFound() from None
        session = result.session
        response = Response(
            {
                "session": session.public_id,
                "messages_added": len(result.added),
                "duplicates_skipped": result.duplicates,
                "messages": MessageSerializer(result.added, many=True).data,
                "quota": result.quota.as_dict(),
            },
            status=status.HTTP_201_CREATED,
        )
        return with_quota_header(response, result.quota.header())

    @extend_schema(
        request=PinSerializer,
        responses={200: MessageSerializer, 404: error(404), 409: error(409)},
        description="Pin a message (it is never compacted) or unpin it. 409 when the message "
        "was removed.",
    )
    @action(
        detail=True, methods=["patch"], url_path=r"messages/(?P<seq>[0-9]+)", url_name="message"
    )
    def pin_message(self, request, id=None, seq=None):
        session = self.get_object()
        self.require(Role.MEMBER, session.team_id)
        payload = PinSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        try:
            message = set_pinned(session, int(seq), payload.validated_data.get("pinned"))
        except Message.DoesNotExist:
            raise exceptions.NotFound(
                f"Session {session.public_id} has no message #{seq}."
            ) from None
        return Response(MessageSerializer(message).data)

    # DELETE on the same route removes the message (sessions/api/deletions.py).
    pin_message.mapping.delete(DeletionActions.remove_message)

    @extend_schema(
        request=CompactRequestSerializer,
        responses={200: CompactionResultSerializer, 409: error(409)},
        description="Compact the session now: summarise turns older than 7 days, fold large "
        "tool outputs, replace repeated text by a pointer to its first occurrence. Messages "
        "of the last 24 hours and pinned messages are never changed. With dry_run, nothing "
        "changes and the answer says what each step would free. 409 when the session is in "
        "the trash.",
    )
    @action(detail=True, methods=["post"])
    def compact(self, request, id=None):
        session = self.get_object()
        self.require(Role.MEMBER, session.team_id)
        payload = CompactRequestSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        dry_run = payload.validated_data["dry_run"]
        result = compact_on_request(session, dry_run=dry_run)
        body = {
            "session": session.public_id,
            "dry_run": dry_run,
            "bytes_freed": result.bytes_freed,
            "messages_removed": result.messages_removed,
            "steps": [vars(step) for step in result.steps],
            "quota": quota_state(
                session.project,
                session.size_bytes,
                bytes_freed=0 if dry_run else result.bytes_freed,
            ).as_dict(),
        }
        return Response(body)

    @extend_schema(
        responses=SizeBreakdownSerializer,
        description="Where the session's bytes are: message text, tool output, vectors, "
        "entities; and the session against its project's quota.",
    )
    @action(detail=True, methods=["get"])
    def size(self, request, id=None):
        return Response(size_breakdown(self.get_object()))

    @extend_schema(
        parameters=[
            OpenApiParameter("format", OpenApiTypes.STR, enum=[*EXPORT_FORMATS], default="json")
        ],
        responses={
            **{
                # JSON and YAML hold the same document; JSONL and Markdown are text; the
                # session folder is a zip.
                (200, content_type.split(";")[0]): (
                    OpenApiTypes.OBJECT
                    if fmt in ("json", "yaml")
                    else OpenApiTypes.BINARY
                    if fmt == "anthropic_session"
                    else OpenApiTypes.STR
                )
                for fmt, (content_type, _) in EXPORT_FORMATS.items()
            },
            403: error(403),
        },
    )
    @action(detail=True, methods=["get"])
    def export(self, request, id=None):
        """Download the session with all its messages and memories as JSON, JSONL, Markdown,
        YAML or seed 004's session folder (zip); each imports back to an equal session."""
        session = self.get_object()
        # A download is a member's right for people, but only a read for a token.
        self.require(Role.MEMBER, session.team_id, token_permission=TokenPermission.READ)
        try:
            response = export_response(
                session, request.query_params.get("format"), access=self.access
            )
        except UnknownExportFormat as exc:
            raise exceptions.ValidationError({"format": str(exc)}) from None
        record_access([session.pk])
        return response


class ImportView(ScopedAPIView):
    """POST /api/v1/import — a transcript file, as multipart field ``file`` or the raw body."""

    parser_classes = [MultiPartParser, FormParser, RawBodyParser]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "format",
                OpenApiTypes.STR,
                enum=sorted(FORMATS),
                description="the file's format; detected from its content when omitted",
            ),
            OpenApiParameter("filename", OpenApiTypes.STR, description="helps detection"),
            OpenApiParameter("project", OpenApiTypes.STR, description="'team/project' or id"),
            OpenApiParameter(
                "visibility",
                OpenApiTypes.STR,
                enum=["private", "summary", "team"],
                description="who reads the new sessions (default: the token's, else the project's)",
            ),
        ],
        request={
            "multipart/form-data": OpenApiRequest(
                inline_serializer("ImportUpload", {"file": serializers.FileField()}),
                # a file part, not a plain form field
                encoding={"file": {"contentType": "application/octet-stream"}},
            ),
            "application/octet-stream": OpenApiTypes.BINARY,
        },
        responses={201: ImportResultSerializer, 409: error(409)},
    )
    def post(self, request):
        params = request.query_params
        project = self.resolve_project(params.get("project") or request.POST.get("project"))
        upload = request.FILES.get("file")
        if upload is not None:
            data, filename = upload.read(), upload.name
        elif request.content_type.startswith("multipart/"):
            raise exceptions.ValidationError({"file": "the multipart field 'file' is missing"})
        else:
            data, filename = request.data, params.get("filename", "")
        if not data:
            raise exceptions.ValidationError({"file": "the file is empty"})
        fmt = params.get("format") or request.POST.get("format") or None
        asked = params.get("visibility") or request.POST.get("visibility")
        ownership = visibility.for_capture(self.access, project, asked)
        parsed, results = capture_file(
            project, data, ownership, filename=filename, format=fmt, unzip_limits=unzip_limits()
        )
        return imported(parsed[0].source_format if parsed else (fmt or ""), results, parsed.skipped)


class EventsView(ScopedAPIView):
    """POST /api/v1/events — chat events as NDJSON, one ``{ts, source, session_id,
    person_id, char_id, sender, text}`` object per line (a chat front end's message log);
    each event's ``session_id`` names the session it creates or extends."""

    parser_classes = [NdjsonParser, RawBodyParser]

    @extend_schema(
        parameters=[
            OpenApiParameter("project", OpenApiTypes.STR, description="'team/project' or id")
        ],
        request={"application/x-ndjson": {"type": "string", "minLength": 1}},
        responses={201: ImportResultSerializer, 409: error(409)},
        examples=[
            OpenApiExample(
                "Two events",
                request_only=True,
                media_type="application/x-ndjson",
                value='{"ts": 1704067200, "source": "chainlit", "session_id": "chainlit:abc", '
                '"person_id": "p_me", "char_id": "char_cathy", "sender": "user", '
                '"text": "How are you today?"}\n'
                '{"ts": 1704067205, "source": "chainlit", "session_id": "chainlit:abc", '
                '"person_id": "p_me", "char_id": "char_cathy", "sender": "assistant", '
                '"text": "Doing well!"}\n',
            )
        ],
    )
    def post(self, request):
        project = self.resolve_project(request.query_params.get("project"))
        if not request.data:
            raise exceptions.ValidationError({"detail": "the body is empty: send NDJSON lines"})
        ownership = visibility.for_capture(
            self.access, project, request.query_params.get("visibility")
        )
        parsed, results = capture_file(project, request.data, ownership, format="ndjson_events")
        return imported("ndjson_events", results, parsed.skipped)


class PipelineView(ScopedAPIView):
    """GET /api/v1/pipeline — the enrichment backlog of what the caller sees (a token: its
    project)."""

    @extend_schema(
        responses=inline_serializer(
            "PipelineState",
            {
                "queue_depth": serializers.IntegerField(allow_null=True),
                "messages": serializers.DictField(child=serializers.IntegerField()),
                "sessions": serializers.DictField(child=serializers.IntegerField()),
            },
        )
    )
    def get(self, request):
        state = pipeline_state(self.access)
        state["queue_depth"] = broker_queue_depth()
        return Response(state)
