from django.contrib.auth.decorators import login_required
from django.shortcuts import render


@login_required
def scorecard_new(request):
    return render(request, "scorecards/placeholder.html", {"title": "Tarjeta de puntos"})


@login_required
def history(request):
    return render(request, "scorecards/placeholder.html", {"title": "Historial"})
