"""IkdError: a failed call, with the google.rpc details ikd attaches to its statuses."""
import contextlib
from typing import List, NamedTuple, Optional

import grpc

from ikd import _pb

STATUS_DETAILS_KEY = "grpc-status-details-bin"


class FieldViolation(NamedTuple):
    field: str  # request field path, e.g. "arm.spec.limbs[2].length"
    description: str


class QuotaViolation(NamedTuple):
    subject: str
    description: str


class IkdError(Exception):
    """A call that ended with a non-OK gRPC status.

    code: grpc.StatusCode; message: the status message; field_violations: the
    google.rpc.BadRequest entries of an INVALID_ARGUMENT (which request field, and why);
    quota_violations: the google.rpc.QuotaFailure entries of a RESOURCE_EXHAUSTED.
    """

    def __init__(self, code: grpc.StatusCode, message: str,
                 field_violations: Optional[List[FieldViolation]] = None,
                 quota_violations: Optional[List[QuotaViolation]] = None):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        self.field_violations = list(field_violations or [])
        self.quota_violations = list(quota_violations or [])

    @property
    def fields(self) -> List[str]:
        """The request field paths named by field_violations."""
        return [v.field for v in self.field_violations]


def _status_details(error: grpc.RpcError):
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailing or ():
        if key == STATUS_DETAILS_KEY:
            return _pb.status_pb2.Status.FromString(value)
    return None


def from_rpc_error(error: grpc.RpcError) -> IkdError:
    """Decodes the status of a failed call, details included."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = error.details() if hasattr(error, "details") else str(error)
    fields, quotas = [], []
    status = _status_details(error)
    for detail in status.details if status else ():
        bad_request = _pb.error_details_pb2.BadRequest()
        quota_failure = _pb.error_details_pb2.QuotaFailure()
        if detail.Unpack(bad_request):
            fields += [FieldViolation(v.field, v.description)
                       for v in bad_request.field_violations]
        elif detail.Unpack(quota_failure):
            quotas += [QuotaViolation(v.subject, v.description) for v in quota_failure.violations]
    return IkdError(code, message or "", fields, quotas)


@contextlib.contextmanager
def translated_errors():
    """Re-raises a grpc.RpcError as IkdError (its gRPC traceback adds nothing for callers)."""
    try:
        yield
    except grpc.RpcError as error:
        raise from_rpc_error(error) from None
