"""Bearer-token auth for the integrations tests."""

from langgraph_sdk import Auth

auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    if authorization != "Bearer token-alice":
        raise Auth.exceptions.HTTPException(status_code=401, detail="Missing or invalid bearer token")
    return {"identity": "alice"}
