"""The base of the plan's result classes: frozen, no extra keys. Data only."""


from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

#: A roofline's peak, bandwidth and ridge: renderers divide by them, so a saved plan must carry
#: them finite and above zero (the planners always do).
RoofFigure = Annotated[float, Field(gt=0, allow_inf_nan=False)]


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
